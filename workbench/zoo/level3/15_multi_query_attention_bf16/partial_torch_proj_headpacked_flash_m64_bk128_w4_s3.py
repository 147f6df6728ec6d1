"""Projections left to PyTorch (F.linear); head-packed causal multi-query flash attention in Triton:
per batch the q projection is read as an (S*H, 64) matrix (row = position x head), each program
takes 64 such rows (4 positions x 16 heads at the GPU sizes) against 128-key blocks of the single
shared k/v head, causal mask by position, base-2 online softmax; 4 warps, 3 stages."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


# Triton's CPU interpreter computes bf16 dots wrongly; only there are the operands upcast.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _mqa_flash_packed(q_ptr, kv_ptr, o_ptr, S, H, scale_log2,
                      D: tl.constexpr, UPCAST: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    """q, o contiguous (B, S, H*D), read per batch as (S*H, D) with row r = (position r // H, head r % H);
    kv contiguous (B, S, 2*D). One program owns BLOCK_M (position, head) rows and streams the shared
    k/v head once for all of them."""
    pid = tl.program_id(0)
    b = tl.program_id(1)
    rows = S * H
    r = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    pos = r // H
    rd = tl.arange(0, D)
    row_mask = r[:, None] < rows
    q = tl.load(q_ptr + b * rows * D + r[:, None] * D + rd[None, :], mask=row_mask, other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    k_base = kv_ptr + b * S * (2 * D)
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, D), tl.float32)
    hi = (tl.minimum((pid + 1) * BLOCK_M, rows) - 1) // H + 1
    for k0 in range(0, hi, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        kt = tl.load(k_base + rk[None, :] * (2 * D) + rd[:, None], mask=rk[None, :] < S, other=0.0)
        if UPCAST:
            s = tl.dot(q, kt.to(tl.float32))
        else:
            s = tl.dot(q, kt)
        s = s.to(tl.bfloat16).to(tl.float32) * scale_log2
        s = tl.where((rk[None, :] <= pos[:, None]) & (rk[None, :] < S), s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(k_base + D + rk[:, None] * (2 * D) + rd[None, :], mask=rk[:, None] < S, other=0.0)
        if UPCAST:
            acc = acc * alpha[:, None] + tl.dot(p, v.to(tl.float32))
        else:
            acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + b * rows * D + r[:, None] * D + rd[None, :], out.to(o_ptr.dtype.element_ty), mask=row_mask)


class ModelNew(nn.Module):
    def __init__(self, heads, head_dim):
        super().__init__()
        self.heads = heads
        self.head_dim = head_dim
        # Placeholders: the executor copies the reference's parameters in by name.
        self.q = nn.Linear(1, 1)
        self.kv = nn.Linear(1, 1)
        self.o = nn.Linear(1, 1)

    def forward(self, x):
        b, s, e = x.shape
        h, d = self.heads, self.head_dim
        q = F.linear(x, self.q.weight, self.q.bias).contiguous()
        kv = F.linear(x, self.kv.weight, self.kv.bias).contiguous()
        o = torch.empty((b, s, h * d), device=x.device, dtype=x.dtype)
        block_m = 64
        grid = (triton.cdiv(s * h, block_m), b)
        _mqa_flash_packed[grid](q, kv, o, s, h, math.log2(math.e) / math.sqrt(d), D=d, UPCAST=_INTERPRETED,
                                BLOCK_M=block_m, BLOCK_K=128, num_warps=4, num_stages=3)
        return F.linear(o, self.o.weight, self.o.bias)
