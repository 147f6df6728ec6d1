"""Deliberately slow: one program per column walks down the column in chunks of 128 rows, so
every load touches 128 addresses N floats apart (uncoalesced), and there are N programs of one
warp each."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _col_mean_strided(x_ptr, y_ptr, M, N, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for r0 in range(0, M, BLOCK):
        rows = r0 + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + rows.to(tl.int64) * N + col, mask=rows < M, other=0.0)
    tl.store(y_ptr + col, tl.sum(acc, axis=0) / M)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((n,), device=x.device, dtype=x.dtype)
        _col_mean_strided[(n,)](x, y, m, n, BLOCK=128, num_warps=1)
        return y
