"""Row argmin on 2-D tiles: each program (8 warps) owns ROWS_PER_PROGRAM=8 rows and walks their
columns in 8x512 tiles, keeping per-lane minima and first indices; at the end each row takes
its minimum and the smallest column holding it. Fewer, fatter programs than one per row."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _argmin_rows_tile(x_ptr, y_ptr, M, N, ROWS_PER_PROGRAM: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * ROWS_PER_PROGRAM + tl.arange(0, ROWS_PER_PROGRAM)
    rmask = rows < M
    base = rows.to(tl.int64) * N
    best = tl.full((ROWS_PER_PROGRAM, BLOCK), float("inf"), tl.float32)
    best_i = tl.full((ROWS_PER_PROGRAM, BLOCK), 2147483647, tl.int32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        valid = rmask[:, None] & (cols[None, :] < N)
        x = tl.load(x_ptr + base[:, None] + cols[None, :], mask=valid, other=float("inf"))
        take = (x < best) & valid
        best_i = tl.where(take, cols[None, :], best_i)
        best = tl.where(take, x, best)
    mn = tl.min(best, axis=1)
    idx = tl.min(tl.where(best == mn[:, None], best_i, 2147483647), axis=1)
    tl.store(y_ptr + rows, idx.to(tl.int64), mask=rmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), device=x.device, dtype=torch.int64)
        ROWS_PER_PROGRAM = 8
        _argmin_rows_tile[(triton.cdiv(m, ROWS_PER_PROGRAM),)](x, y, m, n, ROWS_PER_PROGRAM=ROWS_PER_PROGRAM,
                                                               BLOCK=512, num_warps=8)
        return y
