"""Two kernels: per-group statistics (mean, then centred variance) with one program per group, then a 2-D grid of (plane, block of 1024) programs applies the norm, affine and SiLU."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _gn_stats(x_ptr, st_ptr, GSIZE, BLOCK: tl.constexpr):
    """Per (image, group): mean and 1/sqrt(var + eps) over GSIZE contiguous elements -> st[2*i], st[2*i+1]."""
    i = tl.program_id(0)
    base = i.to(tl.int64) * GSIZE
    s1 = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, GSIZE, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        s1 += tl.load(x_ptr + base + offs, mask=offs < GSIZE, other=0.0)
    mean = tl.sum(s1, axis=0) / GSIZE
    s2 = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, GSIZE, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        d = tl.load(x_ptr + base + offs, mask=offs < GSIZE, other=0.0) - mean
        s2 += tl.where(offs < GSIZE, d * d, 0.0)
    tl.store(st_ptr + 2 * i, mean)
    tl.store(st_ptr + 2 * i + 1, tl.sum(s2, axis=0) / GSIZE)


@triton.jit
def _gn_apply(x_ptr, st_ptr, w_ptr, b_ptr, y_ptr, C, HW, CPG, eps, BLOCK: tl.constexpr):
    """Grid (image*channel plane, block of HW): per-plane scalars, then silu((x - mean) * rstd * w + b)."""
    nc = tl.program_id(0)
    c = nc % C
    grp = (nc // C) * (C // CPG) + c // CPG
    mean = tl.load(st_ptr + 2 * grp)
    rstd = 1.0 / tl.sqrt(tl.load(st_ptr + 2 * grp + 1) + eps)
    scale = rstd * tl.load(w_ptr + c)
    shift = tl.load(b_ptr + c) - mean * scale
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < HW
    base = nc.to(tl.int64) * HW
    v = tl.load(x_ptr + base + offs, mask=m, other=0.0) * scale + shift
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
        stats = torch.empty(2 * n * g, device=x.device, dtype=torch.float32)
        _gn_stats[(n * g,)](x, stats, (c // g) * h * w, BLOCK=1024, num_warps=4)
        y = torch.empty_like(x)
        _gn_apply[(n * c, triton.cdiv(h * w, 1024))](x, stats, self.gn.weight, self.gn.bias, y, c, h * w, c // g, self.gn.eps,
                                                    BLOCK=1024, num_warps=4)
        return y
