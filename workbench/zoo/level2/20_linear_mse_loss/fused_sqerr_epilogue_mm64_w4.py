"""The GEMM never writes its output: each tile adds the bias, subtracts the target and reduces the squared error to one partial; a one-program kernel then averages the partials in a fixed order; tiles 64x64x32, 4 warps."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _mm_sqerr(x_ptr, w_ptr, b_ptr, t_ptr, part_ptr, M, N, K,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Tile of y = x @ w.T + b compared with t; writes sum((y - t)^2) over the tile to part[pid] (fp32 IEEE dots)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * K + kk[:, None], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    cm = (rm[:, None] < M) & (rn[None, :] < N)
    y = acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    d = tl.where(cm, y - tl.load(t_ptr + rm[:, None] * N + rn[None, :], mask=cm, other=0.0), 0.0)
    tl.store(part_ptr + pid_m * tl.num_programs(1) + pid_n, tl.sum(tl.sum(d * d, axis=1), axis=0))


@triton.jit
def _mean_partials(part_ptr, out_ptr, P, denom, BLOCK: tl.constexpr):
    """One program: out = sum(part[0:P]) / denom, in a fixed order (deterministic)."""
    acc = tl.zeros((BLOCK,), tl.float32)
    for p0 in range(0, P, BLOCK):
        offs = p0 + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < P, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / denom)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters and buffers in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x, t):
        x = x.contiguous()
        m, k = x.shape
        n = self.fc.weight.shape[0]
        grid = (triton.cdiv(m, 64), triton.cdiv(n, 64))
        part = torch.empty(grid[0] * grid[1], device=x.device, dtype=torch.float32)
        _mm_sqerr[grid](x, self.fc.weight.contiguous(), self.fc.bias, t.contiguous(), part, m, n, k,
                        BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4, num_stages=2)
        out = torch.empty((), device=x.device, dtype=torch.float32)
        _mean_partials[(1,)](part, out, part.numel(), float(m * n), BLOCK=1024, num_warps=4)
        return out
