"""Fused GLU GEMM: each program accumulates the value and gate column tiles (weight rows n and n + N/2) against one shared x tile, then applies bias and a * sigmoid(g) in the epilogue; bm=32, bn=64, bk=64, warps=4, stages=3."""
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
def _dual_gemm(x_ptr, wa_ptr, wg_ptr, ba_ptr, bg_ptr, y_ptr, M, N, K, sxm, sxk, swn, swk, sym,
               HAS_BIAS: tl.constexpr, GATE: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """Two GEMMs sharing the x tile: a = x @ wa.T (+ ba), g = x @ wg.T (+ bg), both (M, N) in fp32 registers.
    GATE 0: y = a * sigmoid(g) (GLU); 1: y = silu(a) * g (SwiGLU). wa and wg have the same strides."""
    pid = tl.program_id(0)
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
    acc_a = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        x = tl.load(x_ptr + rm[:, None] * sxm + kk[None, :] * sxk, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        wmask = (kk[:, None] < K) & (rn[None, :] < N)
        woff = rn[None, :] * swn + kk[:, None] * swk
        wa = tl.load(wa_ptr + woff, mask=wmask, other=0.0)
        wg = tl.load(wg_ptr + woff, mask=wmask, other=0.0)
        if IEEE:
            acc_a += tl.dot(x, wa, input_precision="ieee")
            acc_g += tl.dot(x, wg, input_precision="ieee")
        elif UPCAST:
            acc_a += tl.dot(x.to(tl.float32), wa.to(tl.float32))
            acc_g += tl.dot(x.to(tl.float32), wg.to(tl.float32))
        else:
            acc_a += tl.dot(x, wa)
            acc_g += tl.dot(x, wg)
    if HAS_BIAS:
        acc_a += tl.load(ba_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
        acc_g += tl.load(bg_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    if GATE == 0:
        y = acc_a * tl.sigmoid(acc_g)
    else:
        y = acc_a * tl.sigmoid(acc_a) * acc_g
    tl.store(y_ptr + rm[:, None] * sym + rn[None, :], y.to(y_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def dual_gemm(x, wa, wg, ba=None, bg=None, gate=0, bm=64, bn=64, bk=32, group_m=8, warps=4, stages=2):
    """gate(x @ wa.T + ba, x @ wg.T + bg) for 2-D x (M, K) and weights (N, K) with equal strides."""
    m, k = x.shape
    n = wa.shape[0]
    y = torch.empty((m, n), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    _dual_gemm[grid](x, wa, wg, ba if ba is not None else y, bg if bg is not None else y, y, m, n, k,
                     x.stride(0), x.stride(1), wa.stride(0), wa.stride(1), y.stride(0),
                     HAS_BIAS=ba is not None, GATE=gate, IEEE=x.dtype == torch.float32, UPCAST=_INTERPRETED,
                     BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m, num_warps=warps, num_stages=stages)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters and buffers in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        w, b = self.fc.weight, self.fc.bias
        half = w.shape[0] // 2
        return dual_gemm(x, w[:half], w[half:], b[:half], b[half:], gate=0, bm=32, bn=64, bk=64, warps=4, stages=3)
