"""One program per (image, channel) plane looping over it with the channel's scale and shift folded into two scalars, 2048 elements per step, 8 warps."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _bn_plane(x_ptr, y_ptr, mean_ptr, var_ptr, w_ptr, b_ptr, C, HW, eps, LOOP: tl.constexpr, BLOCK: tl.constexpr):
    """One (n, c) plane per program row: the channel's scale and shift are computed once as scalars.
    LOOP: one program walks the whole plane; otherwise grid axis 1 splits the plane into blocks."""
    nc = tl.program_id(0)
    c = nc % C
    scale = tl.load(w_ptr + c) / tl.sqrt(tl.load(var_ptr + c) + eps)
    shift = tl.load(b_ptr + c) - tl.load(mean_ptr + c) * scale
    base = nc.to(tl.int64) * HW
    if LOOP:
        for s0 in range(0, HW, BLOCK):
            offs = s0 + tl.arange(0, BLOCK)
            m = offs < HW
            x = tl.load(x_ptr + base + offs, mask=m, other=0.0)
            tl.store(y_ptr + base + offs, tl.maximum(x * scale + shift, 0.0), mask=m)
    else:
        offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        m = offs < HW
        x = tl.load(x_ptr + base + offs, mask=m, other=0.0)
        tl.store(y_ptr + base + offs, tl.maximum(x * scale + shift, 0.0), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters and buffers in by name.
        self.bn = nn.BatchNorm2d(1)

    def forward(self, x):
        x = x.contiguous()
        nb, c, h, w = x.shape
        y = torch.empty_like(x)
        _bn_plane[(nb * c,)](x, y, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias, c, h * w, self.bn.eps, LOOP=True, BLOCK=2048, num_warps=8)
        return y
