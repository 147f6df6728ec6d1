"""Triton finds, per (row, 1024-column chunk), the chunk minimum and its first column (one
program each, 4 warps); torch finishes: argmin over the chunk minima (first chunk on ties,
which holds the smaller columns) and a gather of that chunk's column."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _chunk_min(x_ptr, vmin_ptr, imin_ptr, N, n_chunks, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    ch = tl.program_id(1)
    cols = ch * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row.to(tl.int64) * N + cols, mask=cols < N, other=float("inf"))
    v, i = tl.min(x, axis=0, return_indices=True, return_indices_tie_break_left=True)
    out = row.to(tl.int64) * n_chunks + ch
    tl.store(vmin_ptr + out, v)
    tl.store(imin_ptr + out, (ch * BLOCK + i).to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        BLOCK = 1024
        chunks = triton.cdiv(n, BLOCK)
        vmin = torch.empty((m, chunks), device=x.device, dtype=torch.float32)
        imin = torch.empty((m, chunks), device=x.device, dtype=torch.int64)
        _chunk_min[(m, chunks)](x, vmin, imin, n, chunks, BLOCK=BLOCK, num_warps=4)
        best_chunk = torch.argmin(vmin, dim=1, keepdim=True)
        return torch.gather(imin, 1, best_chunk).squeeze(1).contiguous()
