"""Deliberately slow row argmin: each program (a single warp) handles ROWS_PER_PROGRAM=16
consecutive rows one after another, walking each row 32 columns at a time with per-lane minima
and first indices (strict < updates). Few programs, short loads: latency bound."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _argmin_rows_serial(x_ptr, y_ptr, M, N, ROWS_PER_PROGRAM: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for r in range(ROWS_PER_PROGRAM):
        row = pid * ROWS_PER_PROGRAM + r
        if row < M:
            base = row.to(tl.int64) * N
            best = tl.full((BLOCK,), float("inf"), tl.float32)
            best_i = tl.zeros((BLOCK,), tl.int32) + N
            for c0 in range(0, N, BLOCK):
                cols = c0 + tl.arange(0, BLOCK)
                x = tl.load(x_ptr + base + cols, mask=cols < N, other=float("inf"))
                take = (x < best) & (cols < N)
                best_i = tl.where(take, cols, best_i)
                best = tl.where(take, x, best)
            mn = tl.min(best, axis=0)
            idx = tl.min(tl.where(best == mn, best_i, N), axis=0)
            tl.store(y_ptr + row, idx.to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), device=x.device, dtype=torch.int64)
        ROWS_PER_PROGRAM = 16
        _argmin_rows_serial[(triton.cdiv(m, ROWS_PER_PROGRAM),)](x, y, m, n, ROWS_PER_PROGRAM=ROWS_PER_PROGRAM,
                                                                 BLOCK=32, num_warps=1)
        return y
