"""Deliberately slow column softmax: one program per 16 columns with a single warp, walking the
rows one at a time (1x16 tiles: one 64-byte row segment per step, 3 x M dependent steps) in three
passes (max, sum of exp, write). Still exact to fp32 tolerance."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_cols_slow(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    colmax = tl.full((BLOCK_N,), -float("inf"), tl.float32)
    for r0 in range(0, M, BLOCK_M):
        rows = r0 + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & cmask[None, :]
        x = tl.load(x_ptr + rows[:, None].to(tl.int64) * N + cols[None, :], mask=mask,
                    other=-float("inf"))
        colmax = tl.maximum(colmax, tl.max(x, axis=0))
    colmax = tl.where(cmask, colmax, 0.0)
    tot = tl.zeros((BLOCK_N,), tl.float32)
    for r0 in range(0, M, BLOCK_M):
        rows = r0 + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & cmask[None, :]
        x = tl.load(x_ptr + rows[:, None].to(tl.int64) * N + cols[None, :], mask=mask,
                    other=-float("inf"))
        tot += tl.sum(tl.exp(x - colmax[None, :]), axis=0)
    tot = tl.where(cmask, tot, 1.0)
    for r0 in range(0, M, BLOCK_M):
        rows = r0 + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & cmask[None, :]
        offs = rows[:, None].to(tl.int64) * N + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, tl.exp(x - colmax[None, :]) / tot[None, :], mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        BLOCK_N = 16
        _softmax_cols_slow[(triton.cdiv(n, BLOCK_N),)](x, y, m, n, BLOCK_M=1, BLOCK_N=BLOCK_N,
                                                       num_warps=1)
        return y
