"""Unfused global RMS normalisation: the norm is left to PyTorch as sqrt(mean(x * x)), which
materialises x * x (an extra full write and read) and runs a library reduction; only the final
scaling y = x * (1 / rms) is a Triton kernel reading the norm from device memory."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _scale(x_ptr, norm_ptr, y_ptr, n, BLOCK: tl.constexpr):
    inv = 1.0 / tl.load(norm_ptr)
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, x * inv, mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        norm = torch.sqrt(torch.mean(x * x)).reshape(1)
        y = torch.empty_like(x)
        n = x.numel()
        block = 1024
        _scale[(triton.cdiv(n, block),)](x, norm, y, n, BLOCK=block, num_warps=4)
        return y
