"""Strict upper triangle with tile-level skipping: each program owns a BLOCK_M x BLOCK_N
(64x64) tile and branches on where it sits: wholly on/below the diagonal it writes zeros without
reading x; wholly above it copies with only bounds masks; on the diagonal it loads under the
j > i mask. Reads about half of x, writes all of y. 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _triu_tiles(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    r = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    c = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    inb = (r[:, None] < M) & (c[None, :] < N)
    off = r[:, None].to(tl.int64) * N + c[None, :]
    if pn * BLOCK_N + BLOCK_N - 1 <= pm * BLOCK_M:  # every column <= every row: all zero
        tl.store(y_ptr + off, tl.zeros((BLOCK_M, BLOCK_N), tl.float32), mask=inb)
    elif pn * BLOCK_N > pm * BLOCK_M + BLOCK_M - 1:  # every column > every row: plain copy
        tl.store(y_ptr + off, tl.load(x_ptr + off, mask=inb, other=0.0), mask=inb)
    else:
        keep = inb & (c[None, :] > r[:, None])
        tl.store(y_ptr + off, tl.load(x_ptr + off, mask=keep, other=0.0), mask=inb)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        block_m = 64
        block_n = 64
        grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
        _triu_tiles[grid](x, y, m, n, BLOCK_M=block_m, BLOCK_N=block_n, num_warps=4)
        return y
