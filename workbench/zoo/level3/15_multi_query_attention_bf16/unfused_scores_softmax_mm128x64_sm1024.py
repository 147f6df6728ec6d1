"""Unfused multi-query attention with the score matrix in memory, all in Triton: q and kv projection
GEMMs (128x64x64, group 8, 4 warps, 3 stages); because k is shared, the scores of all heads are one
batched GEMM per batch element, q viewed as (S*H, 64) times k^T, written in bf16 (128x64x32 tiles);
a row-wise causal softmax kernel (1024-wide chunks, running max/sum, 4 warps) writes bf16
probabilities; a second batched GEMM with the shared v (128x64x64) lands directly in the
(B, S, H*64) layout the output projection reads."""
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
def _bmm(a_ptr, b_ptr, c_ptr, M, N, K, sab, sam, sak, sbb, sbk, sbn, scb, scm, scn, UPCAST: tl.constexpr,
         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C[i] = A[i] @ B[i] for strided 3-D views (batch stride 0 broadcasts); 3-D grid, row-major tile order."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    bid = tl.program_id(2).to(tl.int64)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_base = a_ptr + bid * sab
    b_base = b_ptr + bid * sbb
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_base + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_base + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if UPCAST:
            acc += tl.dot(a.to(tl.float32), b.to(tl.float32))
        else:
            acc += tl.dot(a, b)
    tl.store(c_ptr + bid * scb + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def bmm(a, b, out, bm=64, bn=64, bk=32, warps=4, stages=2):
    nb, m, k = a.shape
    n = b.shape[2]
    grid = (triton.cdiv(m, bm), triton.cdiv(n, bn), nb)
    _bmm[grid](a, b, out, m, n, k, a.stride(0), a.stride(1), a.stride(2), b.stride(0), b.stride(1), b.stride(2),
               out.stride(0), out.stride(1), out.stride(2), UPCAST=_INTERPRETED,
               BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages)
    return out


@triton.jit
def _causal_softmax_rows(s_ptr, p_ptr, S, H, scale, BLOCK: tl.constexpr):
    """One program per score row (batch, position, head): scale, causal mask (keys <= position),
    softmax in fp32 with a running max/sum over BLOCK-wide chunks, bf16 probabilities (zeros above
    the diagonal) written back over the full row."""
    row = tl.program_id(0).to(tl.int64)
    limit = (row // H) % S + 1
    base_s = s_ptr + row * S
    base_p = p_ptr + row * S
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    tot = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, limit, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(base_s + cols, mask=cols < limit, other=-float("inf")).to(tl.float32) * scale
        m_new = tl.maximum(m, x)
        safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        tot = tot * tl.exp(m - safe) + tl.exp(x - safe)
        m = m_new
    mx = tl.max(m, axis=0)
    denom = tl.sum(tot * tl.exp(m - mx), axis=0)
    for c0 in range(0, S, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(base_s + cols, mask=cols < limit, other=-float("inf")).to(tl.float32) * scale
        p = tl.exp(x - mx) / denom
        tl.store(base_p + cols, p.to(p_ptr.dtype.element_ty), mask=cols < S)


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
        q = linear(x2, self.q.weight, self.q.bias, bm=128, bn=64, bk=64, group_m=8, warps=4, stages=3)
        kv = linear(x2, self.kv.weight, self.kv.bias, bm=128, bn=64, bk=64, group_m=8, warps=4, stages=3)
        q3 = q.view(b, s * h, d)                      # rows (position, head): one GEMM serves all heads
        kv3 = kv.view(b, s, 2 * d)
        k_t = kv3[:, :, :d].transpose(1, 2)           # (b, d, s) view of the shared key head
        v = kv3[:, :, d:]                             # (b, s, d) view of the shared value head
        scores = bmm(q3, k_t, torch.empty((b, s * h, s), device=x.device, dtype=x.dtype),
                     bm=128, bn=64, bk=32, warps=4, stages=3)
        probs = torch.empty_like(scores)
        _causal_softmax_rows[(b * s * h,)](scores, probs, s, h, 1.0 / math.sqrt(d), BLOCK=1024, num_warps=4)
        o = bmm(probs, v, torch.empty((b, s * h, d), device=x.device, dtype=x.dtype),
                bm=128, bn=64, bk=64, warps=4, stages=3)
        y = linear(o.view(b * s, h * d), self.o.weight, self.o.bias, bm=128, bn=64, bk=64, group_m=8, warps=4, stages=3)
        return y.view(b, s, e)
