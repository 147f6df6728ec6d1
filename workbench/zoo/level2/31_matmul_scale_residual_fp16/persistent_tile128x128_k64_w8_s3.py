"""Persistent fp16 GEMM with the scale-by-0.5 and residual add of x fused into the epilogue (fp32
accumulator): a fixed grid of at most 132 programs (one per H100 SM) walks the output tiles in
strides, grouped tile order (group 8), operand pointers advanced along K; tiles 128x128x64,
8 warps, 3 stages."""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


# Triton's CPU interpreter computes fp16 dots wrongly; only there are the operands upcast.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _mm_scale_residual_persistent(x_ptr, w_ptr, y_ptr, M, N, K, alpha, sxm, sxk, swn, swk, sym, syn,
                                  n_programs, UPCAST: tl.constexpr, BLOCK_M: tl.constexpr,
                                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """Program p computes tiles p, p + n_programs, ... of y = fp16(x @ w.T) * alpha + x (N == K)."""
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    rk = tl.arange(0, BLOCK_K)
    for tile in range(tl.program_id(0), num_m * num_n, n_programs):
        first_m = (tile // per_group) * GROUP_M
        rows_here = tl.minimum(num_m - first_m, GROUP_M)
        rm = (first_m + (tile % per_group) % rows_here) * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = ((tile % per_group) // rows_here) * BLOCK_N + tl.arange(0, BLOCK_N)
        a_ptrs = x_ptr + rm.to(tl.int64)[:, None] * sxm + rk[None, :] * sxk
        w_ptrs = w_ptr + rn.to(tl.int64)[None, :] * swn + rk[:, None] * swk
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k0 < K), other=0.0)
            w = tl.load(w_ptrs, mask=(rk[:, None] + k0 < K) & (rn[None, :] < N), other=0.0)
            if UPCAST:
                acc += tl.dot(a.to(tl.float32), w.to(tl.float32))
            else:
                acc += tl.dot(a, w)
            a_ptrs += BLOCK_K * sxk
            w_ptrs += BLOCK_K * swk
        mask = (rm[:, None] < M) & (rn[None, :] < N)
        res = tl.load(x_ptr + rm.to(tl.int64)[:, None] * sxm + rn[None, :] * sxk, mask=mask, other=0.0)
        out = acc.to(y_ptr.dtype.element_ty).to(tl.float32) * alpha + res.to(tl.float32)
        tl.store(y_ptr + rm.to(tl.int64)[:, None] * sym + rn[None, :] * syn, out.to(y_ptr.dtype.element_ty),
                 mask=mask)


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
        block_m = 128
        block_n = 128
        programs = min(triton.cdiv(m, block_m) * triton.cdiv(n, block_n), 132)
        _mm_scale_residual_persistent[(programs,)](x, w, y, m, n, k, 0.5, x.stride(0), x.stride(1),
                                                   w.stride(0), w.stride(1), y.stride(0), y.stride(1), programs,
                                                   UPCAST=_INTERPRETED, BLOCK_M=block_m, BLOCK_N=block_n,
                                                   BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3)
        return y
