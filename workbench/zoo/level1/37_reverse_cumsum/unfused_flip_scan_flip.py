"""Unfused suffix sum: the reversal is left to PyTorch (torch.flip before and after) and a
Triton kernel does a forward row prefix sum in chunks of 1024 with a carry. Three full passes
over the data, like the reference, so expect roughly reference speed or a little better."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _cumsum(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * N
    carry = 0.0
    for c0 in range(0, N, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + offs, mask=offs < N, other=0.0)
        tl.store(y_ptr + base + offs, tl.cumsum(x, axis=0) + carry, mask=offs < N)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        xr = torch.flip(x, [-1]).contiguous()
        m, n = xr.shape
        yr = torch.empty_like(xr)
        _cumsum[(m,)](xr, yr, n, BLOCK=1024, num_warps=4)
        return torch.flip(yr, [-1])
