"""fp16 GEMM with the scale-by-0.5 and residual add of x fused into its epilogue (fp32 accumulator); tiles 128x128x64, grouped tile order (group 8), 8 warps, 3 stages."""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


# Triton's CPU interpreter computes fp16 dots wrongly; only there are the operands upcast.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _mm_scale_residual(x_ptr, w_ptr, y_ptr, M, N, K, alpha, sxm, sxk, swn, swk, sym, syn,
                       UPCAST: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """One (BLOCK_M, BLOCK_N) tile of y = fp16(x @ w.T) * alpha + x[:, tile columns] (N == K), fp32
    accumulator; the GEMM result is rounded to fp16 first, as the reference's linear output is.
    Tiles are visited in groups of GROUP_M tile rows so neighbouring programs share W in L2."""
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
    x_rows = x_ptr + rm.to(tl.int64)[:, None] * sxm
    w_cols = w_ptr + rn.to(tl.int64)[None, :] * swn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(x_rows + kk[None, :] * sxk, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_cols + kk[:, None] * swk, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if UPCAST:
            acc += tl.dot(a.to(tl.float32), w.to(tl.float32))
        else:
            acc += tl.dot(a, w)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    res = tl.load(x_rows + rn[None, :] * sxk, mask=mask, other=0.0).to(tl.float32)
    h = acc.to(y_ptr.dtype.element_ty).to(tl.float32)
    out = h * alpha + res
    tl.store(y_ptr + rm.to(tl.int64)[:, None] * sym + rn[None, :] * syn, out.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder layer: the executor copies the reference's weights in by name.
        self.fc = nn.Linear(1, 1, bias=False)

    def forward(self, x):
        w = self.fc.weight
        m, k = x.shape
        n = w.shape[0]
        y = torch.empty((m, n), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(m, 128) * triton.cdiv(n, 128),)
        _mm_scale_residual[grid](x, w, y, m, n, k, 0.5, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                                 y.stride(0), y.stride(1), UPCAST=_INTERPRETED,
                                 BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3)
        return y
