"""Deterministic two-stage sum with coarse programs: each program of stage 1 sums
CHUNKS_PER_PROGRAM=16 consecutive 1024-element blocks (a 16K-element stretch) into a per-lane
fp32 accumulator, 4 warps, and writes one partial; stage 2 is one program (4 warps) that folds
the partials in chunks of 512."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _stretch_sums(x_ptr, part_ptr, N, BLOCK: tl.constexpr, CHUNKS_PER_PROGRAM: tl.constexpr):
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * (BLOCK * CHUNKS_PER_PROGRAM)
    acc = tl.zeros((BLOCK,), tl.float32)
    for c in range(CHUNKS_PER_PROGRAM):
        offs = start + c * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < N, other=0.0)
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
        CHUNKS_PER_PROGRAM = 16
        n_part = triton.cdiv(n, BLOCK * CHUNKS_PER_PROGRAM)
        part = torch.empty((n_part,), device=x.device, dtype=torch.float32)
        y = torch.empty((), device=x.device, dtype=torch.float32)
        _stretch_sums[(n_part,)](x, part, n, BLOCK=BLOCK, CHUNKS_PER_PROGRAM=CHUNKS_PER_PROGRAM,
                                 num_warps=4)
        _sum_partials[(1,)](part, y, n_part, BLOCK_P=512, num_warps=4)
        return y
