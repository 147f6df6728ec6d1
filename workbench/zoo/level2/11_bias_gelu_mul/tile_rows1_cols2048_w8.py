"""2-D tiles of 1 x 2048 with 8 warps; the bias slice is loaded once per tile."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _bias_gelu_mul_tile(x_ptr, g_ptr, b_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """y = gelu(x + bias) * g (exact erf GELU) on a BLOCK_M x BLOCK_N tile; the bias slice is loaded once per tile."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    off = rm.to(tl.int64)[:, None] * N + rn[None, :]
    a = tl.load(x_ptr + off, mask=m, other=0.0) + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    y = 0.5 * a * (1.0 + tl.erf(a * 0.7071067811865476)) * tl.load(g_ptr + off, mask=m, other=0.0)
    tl.store(y_ptr + off, y, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters and buffers in by name.
        self.bias = nn.Parameter(torch.empty(0))

    def forward(self, x, g):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        _bias_gelu_mul_tile[(triton.cdiv(m, 1), triton.cdiv(n, 2048))](x, g.contiguous(), self.bias, y, m, n, BLOCK_M=1, BLOCK_N=2048, num_warps=8)
        return y
