"""Deliberately slow row log-sum-exp: each single-warp program handles 64 rows one after the
other (online, in chunks of only 32), so at full size only 128 programs of one warp each run:
fewer warps than SMs, each with a long chain of small dependent loads. Latency bound."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _lse_serial_rows(x_ptr, y_ptr, M, N, ROWS_PER_PROGRAM: tl.constexpr, BLOCK: tl.constexpr):
    first = tl.program_id(0) * ROWS_PER_PROGRAM
    for i in range(0, ROWS_PER_PROGRAM):
        row = first + i
        if row < M:
            base = x_ptr + row.to(tl.int64) * N
            m = tl.full((BLOCK,), -float("inf"), tl.float32)
            s = tl.zeros((BLOCK,), tl.float32)
            for c0 in range(0, N, BLOCK):
                offs = c0 + tl.arange(0, BLOCK)
                x = tl.load(base + offs, mask=offs < N, other=-float("inf"))
                m_new = tl.maximum(m, x)
                safe = tl.where(m_new == -float("inf"), 0.0, m_new)
                s = s * tl.exp(m - safe) + tl.exp(x - safe)
                m = m_new
            mx = tl.max(m, axis=0)
            tl.store(y_ptr + row, mx + tl.log(tl.sum(s * tl.exp(m - mx), axis=0)))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.contiguous().view(-1, x.shape[-1])
        rows, n = x2.shape
        y = torch.empty((rows,), device=x.device, dtype=x.dtype)
        grid = lambda meta: (triton.cdiv(rows, meta["ROWS_PER_PROGRAM"]),)
        _lse_serial_rows[grid](x2, y, rows, n, ROWS_PER_PROGRAM=64, BLOCK=32, num_warps=1)
        return y.view(x.shape[:-1])
