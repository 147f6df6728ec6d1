"""Projections left to PyTorch (F.linear for q, the shared kv and the output); causal multi-query
attention in one Triton flash-style kernel: one program per (64-query block, batch*head), online
softmax over 64-key blocks of the single shared k/v head (each head's program reads the same k/v
rows), no score matrix in memory; 4 warps, 2 stages."""
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
def _mqa_flash(q_ptr, kv_ptr, o_ptr, S, H, s_qb, s_qs, s_kb, s_ks, s_ob, s_os, scale,
               D: tl.constexpr, UPCAST: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr):
    """q (B, S, H*D) and o (B, S, H*D) with head h at columns [h*D, (h+1)*D); kv (B, S, 2*D) holds
    the shared key head at columns [0, D) and the value head at [D, 2*D)."""
    pq = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    rq = pq * BLOCK_Q + tl.arange(0, BLOCK_Q)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + b * s_qb + rq[:, None] * s_qs + h * D + rd[None, :], mask=rq[:, None] < S, other=0.0)
    k_base = kv_ptr + b * s_kb
    m_i = tl.full((BLOCK_Q,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_Q,), tl.float32)
    acc = tl.zeros((BLOCK_Q, D), tl.float32)
    hi = tl.minimum(S, (pq + 1) * BLOCK_Q)
    for k0 in range(0, hi, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        kt = tl.load(k_base + rk[None, :] * s_ks + rd[:, None], mask=rk[None, :] < S, other=0.0)
        if UPCAST:
            s = tl.dot(q.to(tl.float32), kt.to(tl.float32))
        else:
            s = tl.dot(q, kt)
        # the reference's bf16 matmul rounds the scores before they are scaled
        s = s.to(tl.bfloat16).to(tl.float32) * scale
        s = tl.where((rk[None, :] <= rq[:, None]) & (rk[None, :] < S), s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(k_base + D + rk[:, None] * s_ks + rd[None, :], mask=rk[:, None] < S, other=0.0)
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
        block_q = 64
        grid = (triton.cdiv(s, block_q), b * h)
        _mqa_flash[grid](q, kv, o, s, h, q.stride(0), q.stride(1), kv.stride(0), kv.stride(1),
                         o.stride(0), o.stride(1), 1.0 / math.sqrt(d), D=d, UPCAST=_INTERPRETED,
                         BLOCK_Q=block_q, BLOCK_K=64, num_warps=4, num_stages=2)
        return F.linear(o, self.o.weight, self.o.bias)
