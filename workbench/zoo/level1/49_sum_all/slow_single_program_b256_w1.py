"""Deliberately slow: a single program with 1 warp walks the whole vector serially in
256-element chunks, accumulating per lane, and writes the 0-d sum. No parallelism across SMs."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _serial_sum(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for i0 in range(0, N, BLOCK):
        offs = i0 + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.store(y_ptr, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous().view(-1)
        n = x.numel()
        y = torch.empty((), device=x.device, dtype=torch.float32)
        _serial_sum[(1,)](x, y, n, BLOCK=256, num_warps=1)
        return y
