"""Fused masked fill + softmax, one pass over a 2-D tile: each program handles ROWS rows at once
(columns = next power of two of the row length), so short rows still give each program enough
work; reads scores and mask once, writes once. 4 rows per program, 8 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _masked_softmax_rows(x_ptr, m_ptr, y_ptr, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, BLOCK)
    inb = (r[:, None] < n_rows) & (c[None, :] < n_cols)
    off = r[:, None].to(tl.int64) * n_cols + c[None, :]
    x = tl.load(x_ptr + off, mask=inb, other=0.0)
    keep = tl.load(m_ptr + off, mask=inb, other=0) != 0
    x = tl.where(keep & inb, x, -float("inf"))
    mx = tl.max(x, axis=1)
    mx = tl.where(mx == -float("inf"), 0.0, mx)
    e = tl.exp(x - mx[:, None])
    tot = tl.sum(e, axis=1)
    tl.store(y_ptr + off, e / tot[:, None], mask=inb)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores, mask):
        x = scores.contiguous()
        m = mask.contiguous().view(torch.uint8)
        n = x.shape[-1]
        rows = x.numel() // n
        y = torch.empty_like(x)
        rpp = 4
        _masked_softmax_rows[(triton.cdiv(rows, rpp),)](x, m, y, rows, n, ROWS=rpp,
                                                        BLOCK=triton.next_power_of_2(n), num_warps=8)
        return y
