"""Unfused, like eager PyTorch: an elementwise Triton kernel writes the full fp32 Huber-loss map, a second kernel reduces it to per-4096-element partials, and a one-program kernel sums those and divides by n (an extra write and read of n floats)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _huber_map(p_ptr, t_ptr, l_ptr, n, delta, BLOCK: tl.constexpr):
    """Elementwise Huber loss written to a full-size fp32 map."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    d = tl.abs(tl.load(p_ptr + offs, mask=m, other=0.0) - tl.load(t_ptr + offs, mask=m, other=0.0))
    tl.store(l_ptr + offs, tl.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), mask=m)


@triton.jit
def _sum_partials(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    """Program i writes sum(x[i * BLOCK:(i + 1) * BLOCK]) to part[i]."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(part_ptr + tl.program_id(0), tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


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
        loss = torch.empty((n,), device=p.device, dtype=torch.float32)
        _huber_map[(triton.cdiv(n, 1024),)](p, t, loss, n, 1.0, BLOCK=1024, num_warps=4)
        nprog = triton.cdiv(n, 4096)
        part = torch.empty((nprog,), device=p.device, dtype=torch.float32)
        _sum_partials[(nprog,)](loss, part, n, BLOCK=4096, num_warps=8)
        _mean_partials[(1,)](part, out, nprog, float(n), BLOCK=1024, num_warps=4)
        return out
