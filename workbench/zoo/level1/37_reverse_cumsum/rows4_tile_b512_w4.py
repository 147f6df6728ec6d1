"""Row suffix sum on 2-D tiles: each program owns ROWS rows and walks their columns from the end
in reversed-index chunks of BLOCK, scanning along axis 1 with a per-row carry (taken from the
scan's last lane, not a separate sum). Fewer, fatter programs than one per row (1024 at full
size); one read and one write of x."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rev_cumsum_rows(x_ptr, y_ptr, M, N, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    base = rows[:, None].to(tl.int64) * N
    carry = tl.zeros((ROWS,), tl.float32)
    lane = tl.arange(0, BLOCK)
    for c0 in range(0, N, BLOCK):
        cols = (N - 1 - c0) - lane
        mask = (rows[:, None] < M) & (cols[None, :] >= 0)
        x = tl.load(x_ptr + base + cols[None, :], mask=mask, other=0.0)
        y = tl.cumsum(x, axis=1) + carry[:, None]
        tl.store(y_ptr + base + cols[None, :], y, mask=mask)
        # the last lane holds the suffix through this chunk (masked lanes loaded zeros)
        carry = tl.sum(tl.where(lane[None, :] == BLOCK - 1, y, 0.0), axis=1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        rows = 4
        _rev_cumsum_rows[(triton.cdiv(m, rows),)](x, y, m, n, ROWS=rows, BLOCK=512, num_warps=4)
        return y
