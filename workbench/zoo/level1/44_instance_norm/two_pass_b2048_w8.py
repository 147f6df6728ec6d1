"""Instance norm, one program per (n, c) plane, two passes over the plane in chunks (shifted sum/square-sum, then normalise): reads x twice, writes once; BLOCK 2048, 8 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _inorm_two_pass(x_ptr, y_ptr, HW, eps, BLOCK: tl.constexpr):
    """One program per (n, c) plane. Pass 1: sum and square-sum of (x - x0) in BLOCK-wide
    chunks (shifting by the plane's first value keeps the variance accurate for any offset);
    pass 2 re-reads the plane and writes (x - mean) * rstd."""
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
    rstd = 1.0 / tl.sqrt(var + eps)
    mean = x0 + dmean
    for c0 in range(0, HW, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        m = offs < HW
        x = tl.load(x_ptr + base + offs, mask=m, other=0.0)
        tl.store(y_ptr + base + offs, (x - mean) * rstd, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        nb, c, h, w = x.shape
        y = torch.empty_like(x)
        _inorm_two_pass[(nb * c,)](x, y, h * w, 1e-5, BLOCK=2048, num_warps=8)
        return y
