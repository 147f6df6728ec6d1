"""Unfused instance norm: kernel 1 computes each (n, c) plane's mean and rstd (one program per
plane, shifted sums, BLOCK 2048, 8 warps) into two small buffers; kernel 2 is a flat
elementwise pass over the whole tensor (BLOCK 1024) that looks up its plane's statistics.
x is read twice, plus a second launch."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _plane_stats(x_ptr, mean_ptr, rstd_ptr, HW, eps, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    base = plane.to(tl.int64) * HW
    x0 = tl.load(x_ptr + base)
    s1 = tl.zeros((BLOCK,), tl.float32)
    s2 = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, HW, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        m = offs < HW
        d = tl.where(m, tl.load(x_ptr + base + offs, mask=m, other=0.0) - x0, 0.0)
        s1 += d
        s2 += d * d
    dmean = tl.sum(s1, axis=0) / HW
    var = tl.maximum(tl.sum(s2, axis=0) / HW - dmean * dmean, 0.0)
    tl.store(mean_ptr + plane, x0 + dmean)
    tl.store(rstd_ptr + plane, 1.0 / tl.sqrt(var + eps))


@triton.jit
def _normalize_flat(x_ptr, mean_ptr, rstd_ptr, y_ptr, total, HW, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    plane = offs // HW
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    mean = tl.load(mean_ptr + plane, mask=m, other=0.0)
    rstd = tl.load(rstd_ptr + plane, mask=m, other=0.0)
    tl.store(y_ptr + offs, (x - mean) * rstd, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        nb, c, h, w = x.shape
        planes = nb * c
        block = 1024
        mean = torch.empty((planes,), device=x.device, dtype=torch.float32)
        rstd = torch.empty((planes,), device=x.device, dtype=torch.float32)
        y = torch.empty_like(x)
        _plane_stats[(planes,)](x, mean, rstd, h * w, 1e-5, BLOCK=2048, num_warps=8)
        _normalize_flat[(triton.cdiv(x.numel(), block),)](x, mean, rstd, y, x.numel(), h * w, BLOCK=block, num_warps=4)
        return y
