"""Row minimum over a block of rows: each program reduces 4 rows at once with a (4, 1024)
register tile, walking the columns in chunks and keeping a running element-wise minimum, then
one tl.min along the columns; one program per 4 rows, 4 warps. 64-bit row offsets."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rows_min_tile(x_ptr, y_ptr, M, N, stride, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = rows < M
    base = rows[:, None].to(tl.int64) * stride
    acc = tl.full((ROWS, BLOCK), float("inf"), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols[None, :], mask=rmask[:, None] & (cols[None, :] < N),
                    other=float("inf"))
        acc = tl.minimum(acc, x)
    tl.store(y_ptr + rows, tl.min(acc, axis=1), mask=rmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), device=x.device, dtype=x.dtype)
        grid = lambda meta: (triton.cdiv(m, meta["ROWS"]),)
        _rows_min_tile[grid](x, y, m, n, x.stride(0), ROWS=4, BLOCK=1024, num_warps=4)
        return y
