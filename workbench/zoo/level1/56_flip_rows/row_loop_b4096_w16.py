"""Row flip with one program per row: the program walks its row in blocks of 4096 columns,
writing output columns contiguously from the mirrored input columns (a loop over N instead of a
2-D grid). 16 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _flip_row_loop(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * N
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        m = cols < N
        v = tl.load(x_ptr + base + (N - 1 - cols), mask=m)
        tl.store(y_ptr + base + cols, v, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        _flip_row_loop[(m,)](x, y, n, BLOCK=4096, num_warps=16)
        return y
