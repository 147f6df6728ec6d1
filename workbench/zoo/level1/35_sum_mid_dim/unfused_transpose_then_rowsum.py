"""Sum over the middle axis of (B, R, N), unfused: PyTorch first copies x into a (B, N, R)
contiguous transpose (a full extra read and write), then a Triton kernel sums contiguous rows of
length R, 8 rows per program in (8, 256) chunks, 4 warps. About 3x the traffic of a fused kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_sums(x_ptr, y_ptr, rows_total, R, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = rows < rows_total
    base = rows[:, None].to(tl.int64) * R
    acc = tl.zeros((ROWS, BLOCK), tl.float32)
    for c0 in range(0, R, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + base + cols[None, :], mask=rmask[:, None] & (cols[None, :] < R), other=0.0)
    tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=rmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        bsz, r, n = x.shape
        xt = x.transpose(1, 2).contiguous()
        y = torch.empty((bsz, n), device=x.device, dtype=x.dtype)
        total = bsz * n
        grid = lambda meta: (triton.cdiv(total, meta["ROWS"]),)
        _row_sums[grid](xt, y, total, r, ROWS=8, BLOCK=256, num_warps=4)
        return y
