"""Instance norm with little parallelism: each program walks ROWS_PER_PROG=8 consecutive (n, c)
planes one after the other, two 64-wide chunked passes per plane (shifted sum/square-sum, then
normalise), 1 warp. Only planes/8 programs with one warp each. Deliberately slow."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _inorm_planes(x_ptr, y_ptr, PLANES, HW, eps, ROWS_PER_PROG: tl.constexpr, BLOCK: tl.constexpr):
    p0 = tl.program_id(0) * ROWS_PER_PROG
    for i in range(0, ROWS_PER_PROG):
        plane = p0 + i
        if plane < PLANES:
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
        planes = nb * c
        rows = 8
        y = torch.empty_like(x)
        _inorm_planes[(triton.cdiv(planes, rows),)](x, y, planes, h * w, 1e-5, ROWS_PER_PROG=rows, BLOCK=64, num_warps=1)
        return y
