"""Strict upper triangle on 16x512 tiles with no branching: every tile loads x under the
element mask j > i (masked-off lanes issue no memory traffic, so the lower triangle is mostly
not read, at 32-byte sector granularity) and stores the tile with zeros filled in."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _triu_masked(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    r = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    c = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    inb = (r[:, None] < M) & (c[None, :] < N)
    off = r[:, None].to(tl.int64) * N + c[None, :]
    v = tl.load(x_ptr + off, mask=inb & (c[None, :] > r[:, None]), other=0.0)
    tl.store(y_ptr + off, v, mask=inb)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        block_m = 16
        block_n = 512
        grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
        _triu_masked[grid](x, y, m, n, BLOCK_M=block_m, BLOCK_N=block_n, num_warps=4)
        return y
