"""Elementwise kernel: Deliberately slow: 32 elements per program and a single warp, so launch and scheduling overhead dominate."""
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
    y = tl.where(x > 0, x, 0.01 * x)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _unary[(triton.cdiv(n, 32),)](x, y, n, BLOCK=32, num_warps=1)
        return y
