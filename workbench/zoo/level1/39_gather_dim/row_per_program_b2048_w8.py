"""Gather along dim 1, one program per row of x: the program walks the row's K indices in
chunks of BLOCK (2048) and reads x[row, idx] (the whole 16 KB row stays hot in L1/L2 while it
is gathered from). 8 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gather_row(x_ptr, idx_ptr, y_ptr, N, K, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    for c0 in range(0, K, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        m = cols < K
        idx = tl.load(idx_ptr + row * K + cols, mask=m, other=0)
        v = tl.load(x_ptr + row * N + idx, mask=m, other=0.0)
        tl.store(y_ptr + row * K + cols, v, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        x = x.contiguous()
        idx = idx.contiguous()
        m, n = x.shape
        k = idx.shape[1]
        y = torch.empty((m, k), device=x.device, dtype=x.dtype)
        _gather_row[(m,)](x, idx, y, n, k, BLOCK=2048, num_warps=8)
        return y
