"""Unfused: one kernel writes silu(first half) to a temporary, a second multiplies it by the second half (an extra write and read of half the data)."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _silu_half(x_ptr, s_ptr, M, HALF, BLOCK: tl.constexpr):
    """s[r, c] = silu(x[r, c]) for the first half of each row; grid (rows, column blocks)."""
    r = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = c < HALF
    a = tl.load(x_ptr + r * (2 * HALF) + c, mask=m, other=0.0).to(tl.float32)
    tl.store(s_ptr + r * HALF + c, (a * tl.sigmoid(a)).to(s_ptr.dtype.element_ty), mask=m)


@triton.jit
def _mul_second_half(s_ptr, x_ptr, y_ptr, M, HALF, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = c < HALF
    s = tl.load(s_ptr + r * HALF + c, mask=m, other=0.0).to(tl.float32)
    g = tl.load(x_ptr + r * (2 * HALF) + HALF + c, mask=m, other=0.0).to(tl.float32)
    tl.store(y_ptr + r * HALF + c, (s * g).to(y_ptr.dtype.element_ty), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        half = x.shape[-1] // 2
        rows = x.numel() // x.shape[-1]
        s = torch.empty((rows, half), device=x.device, dtype=x.dtype)
        y = torch.empty((*x.shape[:-1], half), device=x.device, dtype=x.dtype)
        grid = (rows, triton.cdiv(half, 1024))
        _silu_half[grid](x, s, rows, half, BLOCK=1024, num_warps=4)
        _mul_second_half[grid](s, x, y, rows, half, BLOCK=1024, num_warps=4)
        return y
