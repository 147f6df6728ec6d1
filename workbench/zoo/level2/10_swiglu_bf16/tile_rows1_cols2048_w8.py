"""2-D tiles of 1 rows x 2048 output columns, 8 warps: row and column come from the grid, so no per-element integer division."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _swiglu_tile(x_ptr, y_ptr, M, HALF, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Tile of BLOCK_M rows x BLOCK_N output columns; y = silu(x[:, :HALF]) * x[:, HALF:], the SiLU rounded
    to the output dtype first as the reference does."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m = (rm[:, None] < M) & (rn[None, :] < HALF)
    row = rm.to(tl.int64)[:, None]
    a = tl.load(x_ptr + row * (2 * HALF) + rn[None, :], mask=m, other=0.0).to(tl.float32)
    g = tl.load(x_ptr + row * (2 * HALF) + HALF + rn[None, :], mask=m, other=0.0).to(tl.float32)
    s = (a * tl.sigmoid(a)).to(y_ptr.dtype.element_ty).to(tl.float32)
    tl.store(y_ptr + row * HALF + rn[None, :], (s * g).to(y_ptr.dtype.element_ty), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        half = x.shape[-1] // 2
        rows = x.numel() // x.shape[-1]
        y = torch.empty((*x.shape[:-1], half), device=x.device, dtype=x.dtype)
        _swiglu_tile[(triton.cdiv(rows, 1), triton.cdiv(half, 2048))](x, y, rows, half, BLOCK_M=1, BLOCK_N=2048, num_warps=8)
        return y
