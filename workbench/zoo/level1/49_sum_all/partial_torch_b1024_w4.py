"""Triton computes one fp32 partial sum per 1024-element block (4 warps); torch.sum adds the
partials (the second stage is left to PyTorch)."""
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


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous().view(-1)
        n = x.numel()
        BLOCK = 1024
        n_part = triton.cdiv(n, BLOCK)
        part = torch.empty((n_part,), device=x.device, dtype=torch.float32)
        _block_sums[(n_part,)](x, part, n, BLOCK=BLOCK, num_warps=4)
        return part.sum()
