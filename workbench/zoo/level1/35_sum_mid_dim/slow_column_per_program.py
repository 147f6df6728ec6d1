"""Deliberately slow sum over the middle axis of (B, R, N): one single-warp program per output
(b, n) walks down its column in chunks of 64 rows, so every load touches 64 addresses N floats
apart (uncoalesced: a 32-byte sector fetched per 4 useful bytes) and there are B * N programs."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _column_sum(x_ptr, y_ptr, R, N, BLOCK: tl.constexpr):
    o = tl.program_id(0)
    b = o // N
    col = o - b * N
    base = x_ptr + b.to(tl.int64) * R * N + col
    acc = tl.zeros((BLOCK,), tl.float32)
    for r0 in range(0, R, BLOCK):
        rows = r0 + tl.arange(0, BLOCK)
        acc += tl.load(base + rows.to(tl.int64) * N, mask=rows < R, other=0.0)
    tl.store(y_ptr + o, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        bsz, r, n = x.shape
        y = torch.empty((bsz, n), device=x.device, dtype=x.dtype)
        _column_sum[(bsz * n,)](x, y, r, n, BLOCK=64, num_warps=1)
        return y
