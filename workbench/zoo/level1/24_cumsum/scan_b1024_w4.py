"""Row prefix sum: chunks of 1024 scanned with tl.cumsum, carried across chunks."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _cumsum(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * N
    carry = 0.0
    for c0 in range(0, N, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + offs, mask=offs < N, other=0.0)
        tl.store(y_ptr + base + offs, tl.cumsum(x, axis=0) + carry, mask=offs < N)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        _cumsum[(m,)](x, y, n, BLOCK=1024, num_warps=4)
        return y
