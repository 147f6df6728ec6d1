"""Strict upper triangle over the flattened matrix: each program handles BLOCK consecutive
elements, recovers (row, col) by division, loads every element of x unconditionally and keeps
it with tl.where(col > row). Reads all of x (no skipping), writes all of y."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _triu_flat(x_ptr, y_ptr, total, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    row = offs // N
    col = offs - row * N
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, tl.where(col > row, x, 0.0), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        total = m * n
        block = 2048
        _triu_flat[(triton.cdiv(total, block),)](x, y, total, n, BLOCK=block, num_warps=8)
        return y
