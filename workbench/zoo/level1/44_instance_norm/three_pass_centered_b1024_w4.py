"""Instance norm in three chunked passes per (n, c) plane: the mean, then the centred variance
sum((x - mean)^2), then the normalised output; x is read three times. BLOCK 1024, 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _inorm_three_pass(x_ptr, y_ptr, HW, eps, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    base = plane.to(tl.int64) * HW
    s1 = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, HW, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        s1 += tl.load(x_ptr + base + offs, mask=offs < HW, other=0.0)
    mean = tl.sum(s1, axis=0) / HW
    s2 = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, HW, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        m = offs < HW
        d = tl.where(m, tl.load(x_ptr + base + offs, mask=m, other=0.0) - mean, 0.0)
        s2 += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(s2, axis=0) / HW + eps)
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
        _inorm_three_pass[(nb * c,)](x, y, h * w, 1e-5, BLOCK=1024, num_warps=4)
        return y
