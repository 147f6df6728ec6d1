"""Deliberately slow strict upper triangle: each one-warp program walks ROWS (8) rows one after
another, 32 columns at a time, loading under the j > i mask and storing zeros elsewhere:
8 x N/32 serial steps of 128-byte accesses per program and only M/8 programs in flight."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _triu_rows_serial(x_ptr, y_ptr, M, N, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r0 = tl.program_id(0).to(tl.int64) * ROWS
    for i in range(ROWS):
        row = r0 + i
        n_row = tl.where(row < M, N, 0)  # rows past the end do nothing
        base = row * N
        for c0 in range(0, N, BLOCK):
            c = c0 + tl.arange(0, BLOCK)
            v = tl.load(x_ptr + base + c, mask=(c < n_row) & (c > row), other=0.0)
            tl.store(y_ptr + base + c, v, mask=c < n_row)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        rows = 8
        _triu_rows_serial[(triton.cdiv(m, rows),)](x, y, m, n, ROWS=rows, BLOCK=32, num_warps=1)
        return y
