"""Two kernels: LayerNorm fused into the fc1 GEMM's prologue (each program first sweeps its x row
tile for the row statistics, then normalises x tiles as it loads them) with bias + exact erf GELU
in the epilogue (128x128x64 tiles, group 8, 8 warps, 3 stages); then fc2 + bias + residual
(128x64x64 tiles, group 8, 4 warps, 3 stages). The normalised activations never touch memory."""
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
def _ln_fc1_gelu(x_ptr, g_ptr, beta_ptr, w_ptr, b_ptr, y_ptr, M, N, K, eps, UPCAST: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """y = gelu(LayerNorm(x) @ w.T + b) with LayerNorm in the prologue: a first sweep over the x row
    tile gathers each row's mean and variance, then every x tile is normalised, scaled, shifted and
    rounded to fp16 as it is loaded for the dot."""
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
    s1 = tl.zeros((BLOCK_M,), tl.float32)
    s2 = tl.zeros((BLOCK_M,), tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * K + kk[None, :], mask=row_ok & (kk[None, :] < K), other=0.0).to(tl.float32)
        s1 += tl.sum(a, axis=1)
        s2 += tl.sum(a * a, axis=1)
    mean = s1 / K
    rstd = tl.rsqrt(tl.maximum(s2 / K - mean * mean, 0.0) + eps)
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
        h = torch.empty((m, n), device=x.device, dtype=x.dtype)
        block_m = 128
        block_n = 128
        grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
        _ln_fc1_gelu[grid](x, self.norm.weight, self.norm.bias, self.fc1.weight, self.fc1.bias, h, m, n, e,
                           self.norm.eps, UPCAST=_INTERPRETED, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=64, GROUP_M=8,
                           num_warps=8, num_stages=3)
        return linear(h, self.fc2.weight, self.fc2.bias, res=x, bm=128, bn=64, bk=64, group_m=8, warps=4, stages=3)
