"""Row argmin, one program per row (4 warps), looping over the row in chunks of 1024. Each lane
keeps its smallest value and the first column where it saw it (strict < updates); at the end
the row minimum is taken and the smallest column among the lanes holding it is written."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _argmin_row_lanes(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * N
    best = tl.full((BLOCK,), float("inf"), tl.float32)
    best_i = tl.full((BLOCK,), 2147483647, tl.int32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < N, other=float("inf"))
        take = (x < best) & (cols < N)
        best_i = tl.where(take, cols, best_i)
        best = tl.where(take, x, best)
    mn = tl.min(best, axis=0)
    idx = tl.min(tl.where(best == mn, best_i, 2147483647), axis=0)
    tl.store(y_ptr + row, idx.to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), device=x.device, dtype=torch.int64)
        _argmin_row_lanes[(m,)](x, y, n, BLOCK=1024, num_warps=4)
        return y
