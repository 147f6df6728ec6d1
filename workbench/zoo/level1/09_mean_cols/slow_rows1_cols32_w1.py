"""Column mean: each program owns 32 columns and walks all rows in steps of 1."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _colmean(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pn = tl.program_id(0)
    cols = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for r0 in range(0, M, BLOCK_M):
        rows = r0 + tl.arange(0, BLOCK_M)
        acc += tl.load(x_ptr + rows[:, None].to(tl.int64) * N + cols[None, :],
                       mask=(rows[:, None] < M) & (cols[None, :] < N), other=0.0)
    tl.store(y_ptr + cols, tl.sum(acc, axis=0) / M, mask=cols < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty(n, device=x.device, dtype=x.dtype)
        _colmean[(triton.cdiv(n, 32),)](x, y, m, n, BLOCK_M=1, BLOCK_N=32, num_warps=1)
        return y
