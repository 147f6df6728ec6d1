"""Deliberately slow row flip: one single-warp program per row moves the row 32 columns at a
time in a serial loop (256 iterations per row at N=8192), reading mirrored input columns. Correct,
but with 8192 tiny programs and little memory-level parallelism."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _flip_slow(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * N
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        m = cols < N
        tl.store(y_ptr + base + cols, tl.load(x_ptr + base + (N - 1 - cols), mask=m), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        _flip_slow[(m,)](x, y, n, BLOCK=32, num_warps=1, num_stages=1)
        return y
