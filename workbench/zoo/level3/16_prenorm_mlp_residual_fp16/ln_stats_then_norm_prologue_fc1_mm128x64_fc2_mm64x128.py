"""Three kernels: row statistics only (mean and 1/std in fp32, 8 rows per program, 128-wide chunks,
4 warps), then fc1 with the LayerNorm applied to each x tile as it is loaded (statistics read once
per row tile) and bias + exact erf GELU in the epilogue (128x64x64 tiles, group 8, 4 warps,
3 stages), then fc2 + bias + residual (64x128x64 tiles, group 8, 4 warps, 4 stages)."""
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
def _row_stats(x_ptr, mean_ptr, rstd_ptr, M, N, eps, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """Per-row mean and 1/std in fp32 for ROWS rows per program, over BLOCK-wide chunks (two passes:
    mean, then centred variance)."""
    pid = tl.program_id(0)
    rows = (pid * ROWS + tl.arange(0, ROWS)).to(tl.int64)
    row_ok = rows[:, None] < M
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((ROWS, BLOCK), tl.float32)
    for c0 in range(0, N, BLOCK):
        c = c0 + cols
        acc += tl.load(x_ptr + rows[:, None] * N + c[None, :], mask=row_ok & (c[None, :] < N), other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=1) / N
    acc = tl.zeros((ROWS, BLOCK), tl.float32)
    for c0 in range(0, N, BLOCK):
        c = c0 + cols
        m = row_ok & (c[None, :] < N)
        xv = tl.load(x_ptr + rows[:, None] * N + c[None, :], mask=m, other=0.0).to(tl.float32)
        xc = tl.where(m, xv - mean[:, None], 0.0)
        acc += xc * xc
    rstd = tl.rsqrt(tl.sum(acc, axis=1) / N + eps)
    tl.store(mean_ptr + rows, mean, mask=rows < M)
    tl.store(rstd_ptr + rows, rstd, mask=rows < M)


@triton.jit
def _norm_fc1_gelu(x_ptr, mean_ptr, rstd_ptr, g_ptr, beta_ptr, w_ptr, b_ptr, y_ptr, M, N, K, UPCAST: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """y = gelu(((x - mean) * rstd * g + beta) @ w.T + b) with precomputed row statistics: each x tile is
    normalised and rounded to fp16 in registers on its way to the dot."""
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
    row_ok = rm[:, None] < M
    mean = tl.load(mean_ptr + rm, mask=rm < M, other=0.0)
    rstd = tl.load(rstd_ptr + rm, mask=rm < M, other=0.0)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        k_ok = kk < K
        a = tl.load(x_ptr + rm[:, None] * K + kk[None, :], mask=row_ok & k_ok[None, :], other=0.0).to(tl.float32)
        g = tl.load(g_ptr + kk, mask=k_ok, other=0.0).to(tl.float32)
        bt = tl.load(beta_ptr + kk, mask=k_ok, other=0.0).to(tl.float32)
        a = ((a - mean[:, None]) * rstd[:, None] * g[None, :] + bt[None, :]).to(tl.float16)
        w = tl.load(w_ptr + rn[None, :] * K + kk[:, None], mask=k_ok[:, None] & (rn[None, :] < N), other=0.0)
        if UPCAST:
            acc += tl.dot(a.to(tl.float32), w.to(tl.float32))
        else:
            acc += tl.dot(a, w)
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty), mask=row_ok & (rn[None, :] < N))


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
        n = self.fc1.weight.shape[0]
        mean = torch.empty((m,), device=x.device, dtype=torch.float32)
        rstd = torch.empty((m,), device=x.device, dtype=torch.float32)
        rows = 8
        _row_stats[(triton.cdiv(m, rows),)](x, mean, rstd, m, e, self.norm.eps, ROWS=rows, BLOCK=128, num_warps=4)
        h = torch.empty((m, n), device=x.device, dtype=x.dtype)
        block_m = 128
        block_n = 64
        grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
        _norm_fc1_gelu[grid](x, mean, rstd, self.norm.weight, self.norm.bias, self.fc1.weight, self.fc1.bias, h,
                             m, n, e, UPCAST=_INTERPRETED, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=64, GROUP_M=8,
                             num_warps=4, num_stages=3)
        return linear(h, self.fc2.weight, self.fc2.bias, res=x, bm=64, bn=128, bk=64, group_m=8, warps=4, stages=4)
