"""Sum over the middle axis of (B, R, N), split reduction in two stages: stage 1 gives each
(batch, 128-column block, R slice) its own program (SPLIT = 8 slices of R) and writes partial
sums to an (SPLIT, B, N) fp32 workspace; stage 2 adds the SPLIT partials in a fixed order.
More programs than one per column block, a small extra write and read. Deterministic."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _partial_sums(x_ptr, ws_ptr, B, R, N, rows_per_split,
                  BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    s = tl.program_id(2)
    r_start = s * rows_per_split
    r_end = tl.minimum(r_start + rows_per_split, R)
    base = x_ptr + b.to(tl.int64) * R * N
    acc = tl.zeros((BLOCK_R, BLOCK_N), tl.float32)
    for r0 in range(r_start, r_end, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        mask = (rows[:, None] < r_end) & (cols[None, :] < N)
        acc += tl.load(base + rows[:, None].to(tl.int64) * N + cols[None, :], mask=mask, other=0.0)
    tl.store(ws_ptr + (s * B + b).to(tl.int64) * N + cols, tl.sum(acc, axis=0), mask=cols < N)


@triton.jit
def _finish(ws_ptr, y_ptr, total, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, SPLIT):
        acc += tl.load(ws_ptr + s * total + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, acc, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        bsz, r, n = x.shape
        split = 8
        rows_per_split = triton.cdiv(r, split)
        ws = torch.empty((split, bsz, n), device=x.device, dtype=torch.float32)
        y = torch.empty((bsz, n), device=x.device, dtype=x.dtype)
        grid = lambda meta: (bsz, triton.cdiv(n, meta["BLOCK_N"]), split)
        _partial_sums[grid](x, ws, bsz, r, n, rows_per_split,
                            BLOCK_R=16, BLOCK_N=128, num_warps=4)
        total = bsz * n
        _finish[lambda meta: (triton.cdiv(total, meta["BLOCK"]),)](ws, y, total, SPLIT=split,
                                                                 BLOCK=1024, num_warps=4)
        return y
