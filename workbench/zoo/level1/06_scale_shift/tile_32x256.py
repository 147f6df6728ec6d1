"""Broadcast affine kernel: 2-D tiles of 32 rows x 256 columns."""
import math
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _affine(x_ptr, s_ptr, t_ptr, y_ptr, M, N, HAS_S: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0.0)
    t = tl.load(t_ptr + rn, mask=rn < N, other=0.0)
    if HAS_S:
        s = tl.load(s_ptr + rn, mask=rn < N, other=0.0)
        y = x * s[None, :] + t[None, :]
    else:
        y = x + t[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], y, mask=mask)





class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's scale and shift in by name.
        self.scale = nn.Parameter(torch.empty(0))
        self.shift = nn.Parameter(torch.empty(0))

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 256))
        _affine[grid](x, self.scale, self.shift, y, M, N,
                      HAS_S=True, BLOCK_M=32, BLOCK_N=256, num_warps=8)
        return y
