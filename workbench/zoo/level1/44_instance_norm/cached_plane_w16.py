"""Cached-plane instance norm: one program per (n, c) plane loads the whole plane (padded to a
power of two, 16384 values at full size) into registers once, computes the mean and the centred
variance from the registers and writes the output: one read and one write of x; 16 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _inorm_cached(x_ptr, y_ptr, HW, eps, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    base = plane.to(tl.int64) * HW
    offs = tl.arange(0, BLOCK)
    m = offs < HW
    x = tl.load(x_ptr + base + offs, mask=m, other=0.0)
    mean = tl.sum(x, axis=0) / HW
    d = tl.where(m, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / HW + eps)
    tl.store(y_ptr + base + offs, d * rstd, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        nb, c, h, w = x.shape
        y = torch.empty_like(x)
        _inorm_cached[(nb * c,)](x, y, h * w, 1e-5, BLOCK=triton.next_power_of_2(h * w), num_warps=16)
        return y
