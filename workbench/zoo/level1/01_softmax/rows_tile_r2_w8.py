"""Block of rows: each program holds a 2-row tile of whole rows (padded to a power of two) in
registers and reduces along the columns; half as many programs, twice the registers each."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, y_ptr, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, BLOCK)
    mask = (r[:, None] < n_rows) & (c[None, :] < n_cols)
    ptrs = r[:, None].to(tl.int64) * n_cols + c[None, :]
    x = tl.load(x_ptr + ptrs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=1)[:, None]
    e = tl.where(mask, tl.exp(x), 0.0)
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(y_ptr + ptrs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.contiguous().view(-1, x.shape[-1])
        rows, n = x2.shape
        y = torch.empty_like(x2)
        _softmax_rows[(triton.cdiv(rows, 2),)](x2, y, rows, n, ROWS=2,
                                               BLOCK=triton.next_power_of_2(n), num_warps=8)
        return y.view(x.shape)
