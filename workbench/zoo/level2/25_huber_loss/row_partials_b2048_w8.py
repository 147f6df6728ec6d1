"""Two-stage fused Huber mean by rows: one 8-warp program per row loops over 2048-wide column chunks and writes the row sum; a one-program kernel sums the row partials in order and divides by n."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _huber_row_partials(p_ptr, t_ptr, part_ptr, N, delta, BLOCK: tl.constexpr):
    """One program per row: loops over BLOCK-wide column chunks, writes the row's Huber-loss sum."""
    row = tl.program_id(0)
    base = row.to(tl.int64) * N
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        m = cols < N
        d = tl.abs(tl.load(p_ptr + base + cols, mask=m, other=0.0) - tl.load(t_ptr + base + cols, mask=m, other=0.0))
        acc += tl.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    tl.store(part_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def _mean_partials(part_ptr, out_ptr, P, denom, BLOCK: tl.constexpr):
    """One program: out = sum(part[0:P]) / denom in a fixed order (deterministic)."""
    acc = tl.zeros((BLOCK,), tl.float32)
    for p0 in range(0, P, BLOCK):
        offs = p0 + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < P, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / denom)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        p = pred.contiguous()
        t = target.contiguous()
        n = p.numel()
        out = torch.empty((), device=p.device, dtype=torch.float32)
        rows = p.shape[0] if p.dim() == 2 else 1
        part = torch.empty((rows,), device=p.device, dtype=torch.float32)
        _huber_row_partials[(rows,)](p, t, part, n // rows, 1.0, BLOCK=2048, num_warps=8)
        _mean_partials[(1,)](part, out, rows, float(n), BLOCK=1024, num_warps=4)
        return out
