"""Row log-sum-exp over a block of rows: each program reduces 4 rows at once with a (4, 1024)
register tile, online (running max and rescaled sum per lane), then merges the lanes of each
row; a quarter as many programs as rows, 8 warps. Reads x once."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _lse_rows(x_ptr, y_ptr, M, N, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = rows < M
    base = rows[:, None].to(tl.int64) * N
    m = tl.full((ROWS, BLOCK), -float("inf"), tl.float32)
    s = tl.zeros((ROWS, BLOCK), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols[None, :], mask=rmask[:, None] & (cols[None, :] < N),
                    other=-float("inf"))
        m_new = tl.maximum(m, x)
        safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        s = s * tl.exp(m - safe) + tl.exp(x - safe)
        m = m_new
    mx = tl.max(m, axis=1)
    safe_mx = tl.where(mx == -float("inf"), 0.0, mx)
    tot = tl.sum(s * tl.exp(m - safe_mx[:, None]), axis=1)
    tl.store(y_ptr + rows, mx + tl.log(tl.where(rmask, tot, 1.0)), mask=rmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.contiguous().view(-1, x.shape[-1])
        rows, n = x2.shape
        y = torch.empty((rows,), device=x.device, dtype=x.dtype)
        grid = lambda meta: (triton.cdiv(rows, meta["ROWS"]),)
        _lse_rows[grid](x2, y, rows, n, ROWS=4, BLOCK=1024, num_warps=8)
        return y.view(x.shape[:-1])
