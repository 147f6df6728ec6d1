"""Row variance (unbiased), one pass over a block of rows: each program reduces 4 rows at once
with a (4, 1024) register tile, 8 warps, accumulating the shifted sums S1 = sum(x - k) and
S2 = sum((x - k)^2) with k = the row's first element (the shift keeps the cancellation in
S2 - S1^2 / N small when the mean is far from 0); var = (S2 - S1^2 / N) / (N - 1)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _var_rows_shifted(x_ptr, y_ptr, M, N, stride, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = rows < M
    base = x_ptr + rows[:, None].to(tl.int64) * stride
    k = tl.load(base, mask=rmask[:, None], other=0.0).to(tl.float32)
    s1 = tl.zeros((ROWS, BLOCK), tl.float32)
    s2 = tl.zeros((ROWS, BLOCK), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = rmask[:, None] & (cols[None, :] < N)
        x = tl.load(base + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, x - k, 0.0)
        s1 += d
        s2 += d * d
    t1 = tl.sum(s1, axis=1)
    t2 = tl.sum(s2, axis=1)
    tl.store(y_ptr + rows, (t2 - t1 * t1 / N) / (N - 1), mask=rmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), device=x.device, dtype=x.dtype)
        grid = lambda meta: (triton.cdiv(m, meta["ROWS"]),)
        _var_rows_shifted[grid](x, y, m, n, x.stride(0), ROWS=4, BLOCK=1024, num_warps=8)
        return y
