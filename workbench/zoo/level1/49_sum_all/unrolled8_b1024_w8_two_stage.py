"""Deterministic two-stage sum with an unrolled body: each stage-1 program (8 warps) issues
UNROLL=8 independent 1024-element loads (tl.static_range) into separate accumulators, so
8 loads are in flight per program, then writes one partial; stage 2 is one program (8 warps)
that folds the partials in chunks of 2048."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _unrolled_sums(x_ptr, part_ptr, N, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * (BLOCK * UNROLL)
    acc = tl.zeros((BLOCK,), tl.float32)
    for u in tl.static_range(UNROLL):
        offs = start + u * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < N, other=0.0, eviction_policy="evict_first")
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def _sum_partials(part_ptr, y_ptr, P, BLOCK_P: tl.constexpr):
    acc = tl.zeros((BLOCK_P,), tl.float32)
    for p0 in range(0, P, BLOCK_P):
        offs = p0 + tl.arange(0, BLOCK_P)
        acc += tl.load(part_ptr + offs, mask=offs < P, other=0.0)
    tl.store(y_ptr, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous().view(-1)
        n = x.numel()
        BLOCK = 1024
        UNROLL = 8
        n_part = triton.cdiv(n, BLOCK * UNROLL)
        part = torch.empty((n_part,), device=x.device, dtype=torch.float32)
        y = torch.empty((), device=x.device, dtype=torch.float32)
        _unrolled_sums[(n_part,)](x, part, n, BLOCK=BLOCK, UNROLL=UNROLL, num_warps=8)
        _sum_partials[(1,)](part, y, n_part, BLOCK_P=2048, num_warps=8)
        return y
