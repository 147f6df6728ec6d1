"""Block of rows: each program reduces 8 rows at once with a (8, 512) register tile, walking
the columns in chunks; one program per 8 rows (fewer, fatter programs than row-per-program),
8 warps. Row maximum, fp32 accumulation."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rows_max_tile(x_ptr, y_ptr, M, N, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = rows < M
    base = rows[:, None].to(tl.int64) * N
    acc = tl.full((ROWS, BLOCK), -float("inf"), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols[None, :], mask=rmask[:, None] & (cols[None, :] < N), other=-float("inf"))
        acc = tl.maximum(acc, x)
    tl.store(y_ptr + rows, tl.max(acc, axis=1), mask=rmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), device=x.device, dtype=x.dtype)
        _rows_max_tile[(triton.cdiv(m, 8),)](x, y, m, n, ROWS=8, BLOCK=512, num_warps=8)
        return y
