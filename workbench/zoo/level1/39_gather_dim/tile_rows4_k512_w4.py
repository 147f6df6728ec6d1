"""Gather along dim 1 on 2-D tiles: each program takes ROWS (4) rows x BLOCK_K (512) index
columns, loads that tile of int64 indices, reads x[row, idx] and writes the tile of y. The
column blocks of a row group are the fastest grid axis, so programs sharing rows of x run
close together in time. 4 warps; measured well behind one-program-per-row on an H100."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gather(x_ptr, idx_ptr, y_ptr, M, N, K, ROWS: tl.constexpr, BLOCK_K: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_K + tl.arange(0, BLOCK_K)
    rows = tl.program_id(1) * ROWS + tl.arange(0, ROWS)
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
        rows = 4
        block_k = 512
        grid = (triton.cdiv(k, block_k), triton.cdiv(m, rows))
        _gather[grid](x, idx, y, m, n, k, ROWS=rows, BLOCK_K=block_k, num_warps=4)
        return y
