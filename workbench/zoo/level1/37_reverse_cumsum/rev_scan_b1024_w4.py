"""Row suffix sum, one program per row: chunks of 1024 walked from the end of the row, each loaded
in reversed index order so tl.cumsum gives suffix sums directly, plus the running total of the
chunks already done; one read and one write of x. 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rev_cumsum(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * N
    carry = 0.0
    for c0 in range(0, N, BLOCK):
        offs = (N - 1 - c0) - tl.arange(0, BLOCK)  # descending: last column first
        mask = offs >= 0
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
        _rev_cumsum[(m,)](x, y, n, BLOCK=1024, num_warps=4)
        return y
