"""Deliberately slow: Triton projection GEMMs with 16x16x16 tiles, no grouped tile order, 1 warp,
1 stage; flash attention with 16-query by 16-key blocks, 1 warp, 1 stage, and no early exit at the
causal diagonal (every program walks all key blocks and masks the upper half). Still correct."""
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
def _linear(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, UPCAST: tl.constexpr,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """y = x @ w.T + b for contiguous x (M, K), w (N, K), y (M, N); fp32 accumulator."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    rows_here = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows_here
    pid_n = (pid % per_group) // rows_here
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * K + kk[:, None], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if UPCAST:
            acc += tl.dot(a.to(tl.float32), w.to(tl.float32))
        else:
            acc += tl.dot(a, w)
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def linear(x2, w, bias, bm=64, bn=64, bk=32, group_m=8, warps=4, stages=2):
    m, k = x2.shape
    n = w.shape[0]
    y = torch.empty((m, n), device=x2.device, dtype=x2.dtype)
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    _linear[grid](x2, w, bias, y, m, n, k, UPCAST=_INTERPRETED, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                  GROUP_M=group_m, num_warps=warps, num_stages=stages)
    return y


@triton.jit
def _mqa_flash(q_ptr, kv_ptr, o_ptr, S, H, scale,
               D: tl.constexpr, UPCAST: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr):
    """q, o contiguous (B, S, H*D); kv contiguous (B, S, 2*D): key head in [0, D), value head in [D, 2D)."""
    pq = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    rq = pq * BLOCK_Q + tl.arange(0, BLOCK_Q)
    rd = tl.arange(0, D)
    row_q = H * D
    q_base = q_ptr + b * S * row_q + h * D
    q = tl.load(q_base + rq[:, None] * row_q + rd[None, :], mask=rq[:, None] < S, other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    k_base = kv_ptr + b * S * (2 * D)
    m_i = tl.full((BLOCK_Q,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_Q,), tl.float32)
    acc = tl.zeros((BLOCK_Q, D), tl.float32)
    # no early exit at the diagonal: every key block is visited and masked
    for k0 in range(0, S, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        kt = tl.load(k_base + rk[None, :] * (2 * D) + rd[:, None], mask=rk[None, :] < S, other=0.0)
        v = tl.load(k_base + D + rk[:, None] * (2 * D) + rd[None, :], mask=rk[:, None] < S, other=0.0)
        if UPCAST:
            s = tl.dot(q, kt.to(tl.float32))
        else:
            s = tl.dot(q, kt)
        s = s.to(tl.bfloat16).to(tl.float32) * scale
        s = tl.where((rk[None, :] <= rq[:, None]) & (rk[None, :] < S), s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        if UPCAST:
            acc = acc * alpha[:, None] + tl.dot(p, v.to(tl.float32))
        else:
            acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + b * S * row_q + h * D + rq[:, None] * row_q + rd[None, :], out.to(o_ptr.dtype.element_ty),
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
        x2 = x.reshape(b * s, e).contiguous()
        q = linear(x2, self.q.weight, self.q.bias, bm=16, bn=16, bk=16, group_m=1, warps=1, stages=1)
        kv = linear(x2, self.kv.weight, self.kv.bias, bm=16, bn=16, bk=16, group_m=1, warps=1, stages=1)
        o = torch.empty((b * s, h * d), device=x.device, dtype=x.dtype)
        block_q = 16
        grid = (triton.cdiv(s, block_q), b * h)
        _mqa_flash[grid](q, kv, o, s, h, 1.0 / math.sqrt(d), D=d, UPCAST=_INTERPRETED,
                         BLOCK_Q=block_q, BLOCK_K=16, num_warps=1, num_stages=1)
        y = linear(o, self.o.weight, self.o.bias, bm=16, bn=16, bk=16, group_m=1, warps=1, stages=1)
        return y.view(b, s, e)
