"""Deliberately slow: one 32-element chunk per single-warp program (n / 32 programs and partials), then a single one-warp program sums all partials in 128-wide steps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _huber_partials(p_ptr, t_ptr, part_ptr, n, delta, BLOCK: tl.constexpr, CHUNKS: tl.constexpr):
    """Program i reduces the contiguous slice [i * CHUNKS * BLOCK, (i + 1) * CHUNKS * BLOCK) of the
    flat inputs to one fp32 partial sum of the Huber loss (0.5 d^2 if |d| < delta, else
    delta * (|d| - 0.5 delta)), written to part[i]."""
    start = tl.program_id(0).to(tl.int64) * (BLOCK * CHUNKS)
    acc = tl.zeros((BLOCK,), tl.float32)
    for c in range(CHUNKS):
        offs = start + c * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        d = tl.abs(tl.load(p_ptr + offs, mask=m, other=0.0) - tl.load(t_ptr + offs, mask=m, other=0.0))
        acc += tl.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    tl.store(part_ptr + tl.program_id(0), tl.sum(acc, axis=0))


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
        nprog = triton.cdiv(n, 32 * 1)
        part = torch.empty((nprog,), device=p.device, dtype=torch.float32)
        _huber_partials[(nprog,)](p, t, part, n, 1.0, BLOCK=32, CHUNKS=1, num_warps=1)
        _mean_partials[(1,)](part, out, nprog, float(n), BLOCK=128, num_warps=1)
        return out
