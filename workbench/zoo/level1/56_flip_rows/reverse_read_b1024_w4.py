"""Row flip with contiguous writes: grid (rows, column blocks of 1024); each program writes output
columns j..j+1023 of its row contiguously and reads the mirrored input columns N-1-j descending
(still whole cache lines per warp). 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _flip_rows(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = cols < N
    v = tl.load(x_ptr + row * N + (N - 1 - cols), mask=m)
    tl.store(y_ptr + row * N + cols, v, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        block = 1024
        _flip_rows[(m, triton.cdiv(n, block))](x, y, n, BLOCK=block, num_warps=4)
        return y
