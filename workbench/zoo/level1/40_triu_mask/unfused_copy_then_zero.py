"""Unfused strict upper triangle in two Triton launches: (1) a plain full copy of x into y;
(2) a second pass over y on 32x128 tiles that overwrites the lower triangle (j <= i) with
zeros. Reads all of x, writes y once fully and its lower half again."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, total, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m, other=0.0), mask=m)


@triton.jit
def _zero_lower(y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    r = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    c = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    low = (r[:, None] < M) & (c[None, :] < N) & (c[None, :] <= r[:, None])
    off = r[:, None].to(tl.int64) * N + c[None, :]
    tl.store(y_ptr + off, tl.zeros((BLOCK_M, BLOCK_N), tl.float32), mask=low)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        block = 1024
        _copy[(triton.cdiv(m * n, block),)](x, y, m * n, BLOCK=block, num_warps=4)
        block_m = 32
        block_n = 128
        grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
        _zero_lower[grid](y, m, n, BLOCK_M=block_m, BLOCK_N=block_n, num_warps=4)
        return y
