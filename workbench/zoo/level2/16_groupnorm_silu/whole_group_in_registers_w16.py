"""One program per (image, group) keeps the whole group in registers (block = next power of two of the group size, 16 warps): a single read and write, but large groups spill."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _gn_whole(x_ptr, w_ptr, b_ptr, y_ptr, GSIZE, CPG, HW, G, eps, BLOCK: tl.constexpr):
    """One program per (image, group) holding the whole group in registers: one read, one write."""
    i = tl.program_id(0)
    base = i.to(tl.int64) * GSIZE
    offs = tl.arange(0, BLOCK)
    m = offs < GSIZE
    x = tl.load(x_ptr + base + offs, mask=m, other=0.0)
    mean = tl.sum(x, axis=0) / GSIZE
    d = tl.where(m, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / GSIZE + eps)
    c = (i % G) * CPG + offs // HW
    v = d * rstd * tl.load(w_ptr + c, mask=m, other=0.0) + tl.load(b_ptr + c, mask=m, other=0.0)
    tl.store(y_ptr + base + offs, v * tl.sigmoid(v), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters and buffers in by name.
        self.gn = nn.GroupNorm(32, 32)  # the problem uses 32 groups

    def forward(self, x):
        x = x.contiguous()
        n, c, h, w = x.shape
        g = self.gn.num_groups
        gsize = (c // g) * h * w
        y = torch.empty_like(x)
        _gn_whole[(n * g,)](x, self.gn.weight, self.gn.bias, y, gsize, c // g, h * w, g, self.gn.eps,
                            BLOCK=triton.next_power_of_2(gsize), num_warps=16)
        return y
