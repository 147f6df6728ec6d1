"""Three Triton kernels: a row-wise LayerNorm (one program per row, 1024-wide chunks, fp32 statistics,
fp16 output, 4 warps), then fc1 with bias + exact erf GELU fused into its epilogue, then fc2 with
bias + the residual add fused into its epilogue; both GEMMs use 128x128x32 tiles, grouped tile
order of 8, 8 warps, 3 stages, fp32 accumulators."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


# Triton's CPU interpreter computes fp16/bf16 dots wrongly; only there are the operands upcast.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _layernorm(x_ptr, w_ptr, b_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    """One row of y = LayerNorm(x) * w + b: mean pass, variance pass, normalise pass over BLOCK chunks."""
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * N
    y_row = y_ptr + row * N
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        acc += tl.load(x_row + c0 + cols, mask=c0 + cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        xv = tl.load(x_row + c0 + cols, mask=c0 + cols < N, other=0.0).to(tl.float32)
        xc = tl.where(c0 + cols < N, xv - mean, 0.0)
        acc += xc * xc
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for c0 in range(0, N, BLOCK):
        m = c0 + cols < N
        xv = tl.load(x_row + c0 + cols, mask=m, other=0.0).to(tl.float32)
        g = tl.load(w_ptr + c0 + cols, mask=m, other=0.0).to(tl.float32)
        bt = tl.load(b_ptr + c0 + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(y_row + c0 + cols, ((xv - mean) * rstd * g + bt).to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def _linear(x_ptr, w_ptr, b_ptr, r_ptr, y_ptr, M, N, K, ACT: tl.constexpr, HAS_RES: tl.constexpr,
            UPCAST: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
            GROUP_M: tl.constexpr):
    """y = act(x @ w.T + b) (+ r) for contiguous x (M, K), w (N, K), r and y (M, N).
    ACT 0: none, 1: exact GELU 0.5 * v * (1 + erf(v / sqrt(2)))."""
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
    if ACT == 1:
        acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    out_mask = (rm[:, None] < M) & (rn[None, :] < N)
    if HAS_RES:
        acc += tl.load(r_ptr + rm[:, None] * N + rn[None, :], mask=out_mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty), mask=out_mask)


def linear(x, w, b, res=None, act=0, bm=64, bn=64, bk=32, group_m=8, warps=4, stages=2):
    m, k = x.shape
    n = w.shape[0]
    y = torch.empty((m, n), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    _linear[grid](x, w, b, res if res is not None else y, y, m, n, k, ACT=act, HAS_RES=res is not None,
                  UPCAST=_INTERPRETED, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m,
                  num_warps=warps, num_stages=stages)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters in by name.
        self.norm = nn.LayerNorm(1)
        self.fc1 = nn.Linear(1, 1)
        self.fc2 = nn.Linear(1, 1)

    def forward(self, x):
        x = x.contiguous()
        m, e = x.shape
        xn = torch.empty_like(x)
        _layernorm[(m,)](x, self.norm.weight, self.norm.bias, xn, e, self.norm.eps, BLOCK=1024, num_warps=4)
        h = linear(xn, self.fc1.weight, self.fc1.bias, act=1, bm=128, bn=128, bk=32, group_m=8, warps=8, stages=3)
        return linear(h, self.fc2.weight, self.fc2.bias, res=x, bm=128, bn=128, bk=32, group_m=8, warps=8, stages=3)
