"""Unfused: a bias+GELU kernel writes a temporary, a second kernel multiplies by the gate (one extra full write and read)."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _bias_gelu(x_ptr, b_ptr, h_ptr, N, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = c < N
    a = tl.load(x_ptr + r * N + c, mask=m, other=0.0) + tl.load(b_ptr + c, mask=m, other=0.0)
    tl.store(h_ptr + r * N + c, 0.5 * a * (1.0 + tl.erf(a * 0.7071067811865476)), mask=m)


@triton.jit
def _mul(h_ptr, g_ptr, y_ptr, N, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = c < N
    tl.store(y_ptr + r * N + c, tl.load(h_ptr + r * N + c, mask=m, other=0.0) * tl.load(g_ptr + r * N + c, mask=m, other=0.0), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters and buffers in by name.
        self.bias = nn.Parameter(torch.empty(0))

    def forward(self, x, g):
        x = x.contiguous()
        m, n = x.shape
        h = torch.empty_like(x)
        y = torch.empty_like(x)
        grid = (m, triton.cdiv(n, 1024))
        _bias_gelu[grid](x, self.bias, h, n, BLOCK=1024, num_warps=4)
        _mul[grid](h, g.contiguous(), y, n, BLOCK=1024, num_warps=4)
        return y
