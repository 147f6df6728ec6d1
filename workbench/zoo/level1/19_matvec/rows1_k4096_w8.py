"""Matrix-vector product: 1 rows per program, K in chunks of 4096."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _matvec(a_ptr, x_ptr, y_ptr, M, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    pm = tl.program_id(0)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M, BLOCK_K), tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rows[:, None].to(tl.int64) * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        x = tl.load(x_ptr + ks, mask=ks < K, other=0.0)
        acc += a * x[None, :]
    tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=rows < M)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        a = a.contiguous()
        m, k = a.shape
        y = torch.empty(m, device=a.device, dtype=a.dtype)
        _matvec[(triton.cdiv(m, 1),)](a, b.contiguous(), y, m, k, BLOCK_M=1, BLOCK_K=4096, num_warps=8)
        return y
