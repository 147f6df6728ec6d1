"""Deliberately slow KL-divergence (batchmean): each single-warp program reduces only 64 flat
elements of p * log p - p * log_q to a partial (B*N/64 partials, over 500k at the GPU size), and
one single-warp program then sums all the partials serially in blocks of 64 and divides by B.
Correct (fixed summation order), but the final serial pass dominates."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _kl_partials(lq_ptr, p_ptr, part_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    lq = tl.load(lq_ptr + offs, mask=m, other=0.0)
    p = tl.load(p_ptr + offs, mask=m, other=0.0)
    v = p * tl.log(tl.where(p > 0, p, 1.0)) - p * lq
    tl.store(part_ptr + tl.program_id(0), tl.sum(v, axis=0))


@triton.jit
def _finish_serial(part_ptr, out_ptr, P, denom, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for p0 in range(0, P, BLOCK):
        offs = p0 + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < P, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / denom)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_q, p):
        lq = log_q.contiguous()
        pp = p.contiguous()
        n = lq.numel()
        block = 64
        nprog = triton.cdiv(n, block)
        part = torch.empty((nprog,), device=lq.device, dtype=torch.float32)
        out = torch.empty((), device=lq.device, dtype=torch.float32)
        _kl_partials[(nprog,)](lq, pp, part, n, BLOCK=block, num_warps=1)
        _finish_serial[(1,)](part, out, nprog, float(lq.shape[0]), BLOCK=64, num_warps=1)
        return out
