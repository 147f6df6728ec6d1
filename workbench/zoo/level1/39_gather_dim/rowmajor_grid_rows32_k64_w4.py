"""Gather along dim 1 on 32-row x 64-index tiles with the row blocks as the fastest grid axis:
programs that share rows of x run far apart in time, so (x being larger than L2) each row of x
is fetched from DRAM again for nearly every one of its K/64 column blocks. Correct but
several times slower than a row-local order. 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gather(x_ptr, idx_ptr, y_ptr, M, N, K, ROWS: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    m = (rows[:, None] < M) & (cols[None, :] < K)
    out_off = rows[:, None].to(tl.int64) * K + cols[None, :]
    idx = tl.load(idx_ptr + out_off, mask=m, other=0)
    v = tl.load(x_ptr + rows[:, None].to(tl.int64) * N + idx, mask=m, other=0.0)
    tl.store(y_ptr + out_off, v, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        x = x.contiguous()
        idx = idx.contiguous()
        m, n = x.shape
        k = idx.shape[1]
        y = torch.empty((m, k), device=x.device, dtype=x.dtype)
        rows = 32
        block_k = 64
        grid = (triton.cdiv(m, rows), triton.cdiv(k, block_k))
        _gather[grid](x, idx, y, m, n, k, ROWS=rows, BLOCK_K=block_k, num_warps=4)
        return y
