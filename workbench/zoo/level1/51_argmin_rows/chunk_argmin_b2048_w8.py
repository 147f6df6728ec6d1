"""Row argmin with a scalar running best: one program per row (8 warps), chunks of 2048. Each
chunk is reduced with tl.argmin (first index on ties) and replaces the running (value, index)
only when its minimum is strictly smaller, so earlier chunks win ties."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _argmin_row_chunks(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * N
    best = float("inf")
    best_i = 0
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < N, other=float("inf"))
        v, i = tl.min(x, axis=0, return_indices=True, return_indices_tie_break_left=True)
        take = v < best
        best_i = tl.where(take, c0 + i, best_i)
        best = tl.where(take, v, best)
    tl.store(y_ptr + row, best_i.to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), device=x.device, dtype=torch.int64)
        _argmin_row_chunks[(m,)](x, y, n, BLOCK=2048, num_warps=8)
        return y
