"""Deliberately slow row suffix sum: each one-warp program scans ROWS (8) rows one after
another, each in reversed-index chunks of only 32 with a carried total, so a program runs
8 x N/32 dependent steps with almost no memory-level parallelism (M/8 programs in flight)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rev_cumsum_serial(x_ptr, y_ptr, M, N, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r0 = tl.program_id(0).to(tl.int64) * ROWS
    for i in range(ROWS):
        row = r0 + i
        n_row = tl.where(row < M, N, 0)  # rows past the end do nothing
        base = row * N
        carry = 0.0
        for c0 in range(0, N, BLOCK):
            offs = (N - 1 - c0) - tl.arange(0, BLOCK)
            mask = (offs >= 0) & (offs < n_row)
            x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
            tl.store(y_ptr + base + offs, tl.cumsum(x, axis=0) + carry, mask=mask)
            carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        rows = 8
        _rev_cumsum_serial[(triton.cdiv(m, rows),)](x, y, m, n, ROWS=rows, BLOCK=32, num_warps=1)
        return y
