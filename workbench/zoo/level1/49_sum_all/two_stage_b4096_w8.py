"""Deterministic two-stage sum: stage 1 gives each 4096-element block its own program (8 warps)
and writes one fp32 partial per block; stage 2 is a single program (4 warps) that loops over
the partials in chunks of 1024 and writes the 0-d result."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _block_sums(x_ptr, part_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.store(part_ptr + pid, tl.sum(x.to(tl.float32), axis=0))


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
        BLOCK = 4096
        n_part = triton.cdiv(n, BLOCK)
        part = torch.empty((n_part,), device=x.device, dtype=torch.float32)
        y = torch.empty((), device=x.device, dtype=torch.float32)
        _block_sums[(n_part,)](x, part, n, BLOCK=BLOCK, num_warps=8)
        _sum_partials[(1,)](part, y, n_part, BLOCK_P=1024, num_warps=4)
        return y
