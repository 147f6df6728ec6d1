"""Elementwise kernel: Flat 1-D grid, 16384 elements per program, 16 warps."""
import math
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _unary(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = 2.0 * tl.sigmoid(2.0 * x) - 1.0
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _unary[(triton.cdiv(n, 16384),)](x, y, n, BLOCK=16384, num_warps=16)
        return y
