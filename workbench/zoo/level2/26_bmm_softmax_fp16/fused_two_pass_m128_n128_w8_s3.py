"""Fused scores + softmax with no scratch score matrix: a program keeps a BLOCK_M x d block of q in
registers; pass 1 streams key blocks, computing q.k^T on tensor cores (fp16 in, fp32 accumulate)
and keeping an online row max and rescaled row sum; pass 2 recomputes each score block and writes
it normalised in fp16. The GEMM runs twice, the (32, 1024, 1024) output is written once.
128 query rows x 128 keys, 8 warps, 3 stages."""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

# Triton's CPU interpreter computes fp16 dots wrongly; only there are the operands upcast.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _qk_softmax(q_ptr, k_ptr, y_ptr, S, D, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                UPCAST: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, BLOCK_D)
    q = tl.load(q_ptr + bh * S * D + rm[:, None] * D + rd[None, :], mask=(rm[:, None] < S) & (rd[None, :] < D), other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    for n0 in range(0, S, BLOCK_N):
        rn = n0 + tl.arange(0, BLOCK_N)
        kt = tl.load(k_ptr + bh * S * D + rn[None, :] * D + rd[:, None], mask=(rn[None, :] < S) & (rd[:, None] < D), other=0.0)
        if UPCAST:
            kt = kt.to(tl.float32)
        s = tl.dot(q, kt)
        s = tl.where(rn[None, :] < S, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(s - m_new[:, None]), axis=1)
        m_i = m_new
    inv_l = 1.0 / l_i
    for n0 in range(0, S, BLOCK_N):
        rn = n0 + tl.arange(0, BLOCK_N)
        kt = tl.load(k_ptr + bh * S * D + rn[None, :] * D + rd[:, None], mask=(rn[None, :] < S) & (rd[:, None] < D), other=0.0)
        if UPCAST:
            kt = kt.to(tl.float32)
        s = tl.dot(q, kt)
        p = tl.exp(s - m_i[:, None]) * inv_l[:, None]
        tl.store(y_ptr + bh * S * S + rm[:, None] * S + rn[None, :], p.to(y_ptr.dtype.element_ty),
                 mask=(rm[:, None] < S) & (rn[None, :] < S))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k):
        b, s, d = q.shape
        q = q.contiguous()
        k = k.contiguous()
        y = torch.empty((b, s, s), device=q.device, dtype=q.dtype)
        bm = 128
        _qk_softmax[(triton.cdiv(s, bm), b)](q, k, y, s, d, BLOCK_M=bm, BLOCK_N=128,
                                           BLOCK_D=max(16, triton.next_power_of_2(d)), UPCAST=_INTERPRETED,
                                           num_warps=8, num_stages=3)
        return y
