"""Projections left to PyTorch (F.linear); causal multi-query flash attention in Triton with the key
loop split in two: key blocks wholly below the 128-query block run without any mask, only the blocks
that cross the diagonal apply the causal mask. Online softmax in base 2 (exp2 with log2(e) folded into
the scale); one program per (128-query block, batch*head), 32-key blocks, 8 warps, 3 stages."""
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
def _mqa_flash_split(q_ptr, kv_ptr, o_ptr, S, H, s_qb, s_qs, s_kb, s_ks, s_ob, s_os, scale_log2,
                     D: tl.constexpr, UPCAST: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr):
    pq = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    q_start = pq * BLOCK_Q
    rq = q_start + tl.arange(0, BLOCK_Q)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + b * s_qb + rq[:, None] * s_qs + h * D + rd[None, :], mask=rq[:, None] < S, other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    k_base = kv_ptr + b * s_kb
    m_i = tl.full((BLOCK_Q,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_Q,), tl.float32)
    acc = tl.zeros((BLOCK_Q, D), tl.float32)
    # 1) key blocks that end at or before the first query of the block: every key is visible
    full_end = (q_start // BLOCK_K) * BLOCK_K
    for k0 in range(0, full_end, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        kt = tl.load(k_base + rk[None, :] * s_ks + rd[:, None])
        v = tl.load(k_base + D + rk[:, None] * s_ks + rd[None, :])
        if UPCAST:
            s = tl.dot(q, kt.to(tl.float32))
        else:
            s = tl.dot(q, kt)
        s = s.to(tl.bfloat16).to(tl.float32) * scale_log2
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        if UPCAST:
            acc = acc * alpha[:, None] + tl.dot(p, v.to(tl.float32))
        else:
            acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
        m_i = m_new
    # 2) key blocks that cross the diagonal (or the end of the sequence): masked
    hi = tl.minimum(S, q_start + BLOCK_Q)
    for k0 in range(full_end, hi, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        kt = tl.load(k_base + rk[None, :] * s_ks + rd[:, None], mask=rk[None, :] < S, other=0.0)
        v = tl.load(k_base + D + rk[:, None] * s_ks + rd[None, :], mask=rk[:, None] < S, other=0.0)
        if UPCAST:
            s = tl.dot(q, kt.to(tl.float32))
        else:
            s = tl.dot(q, kt)
        s = s.to(tl.bfloat16).to(tl.float32) * scale_log2
        s = tl.where((rk[None, :] <= rq[:, None]) & (rk[None, :] < S), s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        if UPCAST:
            acc = acc * alpha[:, None] + tl.dot(p, v.to(tl.float32))
        else:
            acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + b * s_ob + rq[:, None] * s_os + h * D + rd[None, :], out.to(o_ptr.dtype.element_ty),
             mask=rq[:, None] < S)


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
        block_q = 128
        grid = (triton.cdiv(s, block_q), b * h)
        _mqa_flash_split[grid](q, kv, o, s, h, q.stride(0), q.stride(1), kv.stride(0), kv.stride(1),
                               o.stride(0), o.stride(1), math.log2(math.e) / math.sqrt(d), D=d,
                               UPCAST=_INTERPRETED, BLOCK_Q=block_q, BLOCK_K=32, num_warps=8, num_stages=3)
        return F.linear(o, self.o.weight, self.o.bias)
