"""Row flip with contiguous reads: grid (rows, column blocks of 2048); each program reads input
columns j..j+2047 of its row contiguously and scatters them to the mirrored output columns
N-1-j (descending addresses, whole cache lines per warp). 8 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _flip_rows(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = cols < N
    v = tl.load(x_ptr + row * N + cols, mask=m)
    tl.store(y_ptr + row * N + (N - 1 - cols), v, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        block = 2048
        _flip_rows[(m, triton.cdiv(n, block))](x, y, n, BLOCK=block, num_warps=8)
        return y
