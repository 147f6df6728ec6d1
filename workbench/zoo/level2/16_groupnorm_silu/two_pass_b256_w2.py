"""GroupNorm + SiLU: one program per (image, group), two passes over the group's contiguous elements in chunks of 256."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _groupnorm_silu(x_ptr, w_ptr, b_ptr, y_ptr, GSIZE, CPG, HW, G, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)              # (n, g)
    g = pid % G
    base = pid.to(tl.int64) * GSIZE
    s1 = tl.zeros((BLOCK,), tl.float32)
    s2 = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, GSIZE, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + offs, mask=offs < GSIZE, other=0.0)
        s1 += x
        s2 += x * x
    mean = tl.sum(s1, axis=0) / GSIZE
    rstd = tl.rsqrt(tl.maximum(tl.sum(s2, axis=0) / GSIZE - mean * mean, 0.0) + eps)
    for c0 in range(0, GSIZE, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        m = offs < GSIZE
        ch = g * CPG + offs // HW
        x = tl.load(x_ptr + base + offs, mask=m, other=0.0)
        y = (x - mean) * rstd * tl.load(w_ptr + ch, mask=m, other=0.0) + tl.load(b_ptr + ch, mask=m, other=0.0)
        tl.store(y_ptr + base + offs, y * tl.sigmoid(y), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters in by name.
        self.gn = nn.GroupNorm(32, 32)

    def forward(self, x):
        x = x.contiguous()
        n, c, h, w = x.shape
        g = self.gn.num_groups
        y = torch.empty_like(x)
        _groupnorm_silu[(n * g,)](x, self.gn.weight, self.gn.bias, y, (c // g) * h * w, c // g, h * w, g, self.gn.eps, BLOCK=256, num_warps=2)
        return y
