"""Two kernels: a tiny one folds the BatchNorm statistics into per-channel scale and shift, then a flat elementwise kernel (2048 per program) applies scale, shift and ReLU."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _bn_prep(mean_ptr, var_ptr, w_ptr, b_ptr, ss_ptr, C, eps, BLOCK: tl.constexpr):
    """scale = w / sqrt(var + eps) into ss[0:C], shift = b - mean * scale into ss[C:2C]."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < C
    scale = tl.load(w_ptr + offs, mask=m, other=0.0) / tl.sqrt(tl.load(var_ptr + offs, mask=m, other=1.0) + eps)
    tl.store(ss_ptr + offs, scale, mask=m)
    tl.store(ss_ptr + C + offs, tl.load(b_ptr + offs, mask=m, other=0.0) - tl.load(mean_ptr + offs, mask=m, other=0.0) * scale, mask=m)


@triton.jit
def _bn_apply(x_ptr, ss_ptr, y_ptr, total, C, HW, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    c = (offs // HW) % C
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    y = x * tl.load(ss_ptr + c, mask=m, other=0.0) + tl.load(ss_ptr + C + c, mask=m, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(y, 0.0), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters and buffers in by name.
        self.bn = nn.BatchNorm2d(1)

    def forward(self, x):
        x = x.contiguous()
        c = x.shape[1]
        ss = torch.empty(2 * c, device=x.device, dtype=torch.float32)
        _bn_prep[(triton.cdiv(c, 128),)](self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias, ss, c,
                                         self.bn.eps, BLOCK=128)
        y = torch.empty_like(x)
        total = x.numel()
        _bn_apply[(triton.cdiv(total, 2048),)](x, ss, y, total, c, x[0, 0].numel(), BLOCK=2048, num_warps=8)
        return y
