"""Triton QKV projection, flash-style causal attention (online softmax, no score matrix in memory), Triton output projection; matmul bm=16, bn=16, bk=16, warps=1, stages=1; attention bq=16, bk=16, warps=1, stages=1."""
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
def _matmul(a_ptr, b_ptr, c_ptr, bias_ptr, res_ptr, M, N, K,
            sab, sam, sak, sbb, sbk, sbn, scb, scm, scn, srb, srm, srn,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
            BIAS_ON: tl.constexpr, ACT: tl.constexpr, HAS_RES: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr):
    pid = tl.program_id(0)
    bid = tl.program_id(1)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_base = a_ptr + bid * sab
    b_base = b_ptr + bid * sbb
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_base + rm[:, None] * sam + kk[None, :] * sak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_base + kk[:, None] * sbk + rn[None, :] * sbn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if IEEE:
            acc += tl.dot(a, b, input_precision="ieee")
        elif UPCAST:
            acc += tl.dot(a.to(tl.float32), b.to(tl.float32))
        else:
            acc += tl.dot(a, b)
    if BIAS_ON == 1:
        acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    if BIAS_ON == 2:
        acc += tl.load(bias_ptr + rm, mask=rm < M, other=0.0).to(tl.float32)[:, None]
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    if HAS_RES:
        acc += tl.load(res_ptr + bid * srb + rm[:, None] * srm + rn[None, :] * srn, mask=cmask, other=0.0).to(tl.float32)
    if ACT == 1:
        acc = tl.maximum(acc, 0.0)
    if ACT == 2:
        inner = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
        acc = 0.5 * acc * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    if ACT == 3:
        acc = acc * tl.sigmoid(acc)
    tl.store(c_ptr + bid * scb + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty), mask=cmask)


def matmul(a, b, bias=None, act=0, res=None, bias_on=1, out_dtype=None, bm=64, bn=64, bk=32, group_m=8, warps=4, stages=2):
    """C = a @ b for 2-D or batched 3-D views (any strides); fp32 inputs use full-precision dots."""
    batched = a.dim() == 3 or b.dim() == 3
    a3 = a if a.dim() == 3 else a.unsqueeze(0)
    b3 = b if b.dim() == 3 else b.unsqueeze(0)
    nb = max(a3.shape[0], b3.shape[0])
    M, K = a3.shape[1], a3.shape[2]
    N = b3.shape[2]
    c = torch.empty((nb, M, N), device=a.device, dtype=out_dtype or a.dtype)
    sab = a3.stride(0) if a3.shape[0] > 1 else 0
    sbb = b3.stride(0) if b3.shape[0] > 1 else 0
    r3 = None if res is None else (res if res.dim() == 3 else res.unsqueeze(0))
    rs = (0, 0, 0) if r3 is None else ((r3.stride(0) if r3.shape[0] > 1 else 0), r3.stride(1), r3.stride(2))
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn), nb)
    _matmul[grid](a3, b3, c, bias if bias is not None else c, r3 if r3 is not None else c, M, N, K,
                  sab, a3.stride(1), a3.stride(2), sbb, b3.stride(1), b3.stride(2),
                  c.stride(0), c.stride(1), c.stride(2), rs[0], rs[1], rs[2],
                  BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m,
                  BIAS_ON=0 if bias is None else bias_on, ACT=act, HAS_RES=res is not None,
                  IEEE=a.dtype == torch.float32, UPCAST=_INTERPRETED, num_warps=warps, num_stages=stages)
    return c if batched else c[0]

@triton.jit
def _flash(q_ptr, k_ptr, v_ptr, o_ptr, SQ, SK, HEADS, sq_b, sq_s, sq_h, sk_b, sk_s, sk_h, sv_b, sv_s, sv_h,
           so_b, so_s, so_h, scale, CAUSAL: tl.constexpr, D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr,
           UPCAST: tl.constexpr):
    """Attention for one (batch, head, query block): online softmax over key blocks; scores are
    rounded to the input dtype like a bf16 matmul's output before scaling."""
    pq = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // HEADS
    h = bh % HEADS
    rq = pq * BLOCK_Q + tl.arange(0, BLOCK_Q)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + b * sq_b + h * sq_h + rq[:, None] * sq_s + rd[None, :], mask=rq[:, None] < SQ, other=0.0)
    m_i = tl.full((BLOCK_Q,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_Q,), tl.float32)
    acc = tl.zeros((BLOCK_Q, D), tl.float32)
    hi = SK
    if CAUSAL:
        hi = tl.minimum(SK, (pq + 1) * BLOCK_Q)
    for k0 in range(0, hi, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        k = tl.load(k_ptr + b * sk_b + h * sk_h + rk[None, :] * sk_s + rd[:, None], mask=rk[None, :] < SK, other=0.0)
        if UPCAST:
            s = tl.dot(q.to(tl.float32), k.to(tl.float32))
        else:
            s = tl.dot(q, k)
        s = s.to(q_ptr.dtype.element_ty).to(tl.float32) * scale
        valid = rk[None, :] < SK
        if CAUSAL:
            valid = valid & (rk[None, :] <= rq[:, None])
        s = tl.where(valid, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + b * sv_b + h * sv_h + rk[:, None] * sv_s + rd[None, :], mask=rk[:, None] < SK, other=0.0)
        if UPCAST:
            acc = acc * alpha[:, None] + tl.dot(p, v.to(tl.float32))
        else:
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + b * so_b + h * so_h + rq[:, None] * so_s + rd[None, :], out.to(o_ptr.dtype.element_ty), mask=rq[:, None] < SQ)


def attention(q, k, v, causal, bq=64, bk=64, warps=4, stages=2):
    """q (B, SQ, H, D), k/v (B, SK, H, D) views with unit stride on D -> output (B, SQ, H, D)."""
    b, sq, heads, d = q.shape
    sk = k.shape[1]
    o = torch.empty((b, sq, heads, d), device=q.device, dtype=q.dtype)
    grid = (triton.cdiv(sq, bq), b * heads)
    _flash[grid](q, k, v, o, sq, sk, heads, q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
                 v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1), o.stride(2), 1.0 / math.sqrt(d),
                 CAUSAL=causal, D=d, BLOCK_Q=bq, BLOCK_K=bk, UPCAST=_INTERPRETED, num_warps=warps, num_stages=stages)
    return o


class ModelNew(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.heads = heads
        # Placeholders: the executor copies the reference's parameters in by name.
        self.qkv = nn.Linear(1, 1)
        self.proj = nn.Linear(1, 1)

    def forward(self, x):
        b, s, e = x.shape
        heads = self.heads
        d = e // heads
        qkv = matmul(x.reshape(b * s, e), self.qkv.weight.t(), bias=self.qkv.bias, bm=16, bn=16, bk=16, warps=1, stages=1).view(b, s, 3, heads, d)
        o = attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], True, bq=16, bk=16, warps=1, stages=1)
        return matmul(o.reshape(b * s, e), self.proj.weight.t(), bias=self.proj.bias, bm=16, bn=16, bk=16, warps=1, stages=1).view(b, s, e)
