"""Flat elementwise kernel over NCHW, 2048 elements and 8 warps per program; the channel of each element is recomputed by integer division and its four BatchNorm statistics gathered."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _chan_affine(x_ptr, y_ptr, mean_ptr, var_ptr, w_ptr, b_ptr, total, C, HW, eps,
                 MODE: tl.constexpr, ACT: tl.constexpr, BLOCK: tl.constexpr):
    """Flat 1-D blocks; channel of element i is (i // HW) % C. MODE 0: BatchNorm eval, 1: + bias (b_ptr).
    ACT 0 none, 1 ReLU, 2 SiLU."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    c = (offs // HW) % C
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    if MODE == 0:
        mean = tl.load(mean_ptr + c, mask=m, other=0.0)
        var = tl.load(var_ptr + c, mask=m, other=1.0)
        g = tl.load(w_ptr + c, mask=m, other=0.0)
        y = (x - mean) * (g / tl.sqrt(var + eps)) + tl.load(b_ptr + c, mask=m, other=0.0)
    else:
        y = x + tl.load(b_ptr + c, mask=m, other=0.0)
    if ACT == 1:
        y = tl.maximum(y, 0.0)
    if ACT == 2:
        y = y * tl.sigmoid(y)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=m)


def chan_affine(x, mean=None, var=None, w=None, b=None, mode=0, act=1, eps=1e-5, block=1024, warps=4):
    x = x.contiguous()
    y = torch.empty_like(x)
    total = x.numel()
    hw = x[0, 0].numel()
    _chan_affine[(triton.cdiv(total, block),)](x, y, mean if mean is not None else x, var if var is not None else x,
                                               w if w is not None else x, b, total, x.shape[1], hw, eps,
                                               MODE=mode, ACT=act, BLOCK=block, num_warps=warps)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters and buffers in by name.
        self.bn = nn.BatchNorm2d(1)

    def forward(self, x):
        return chan_affine(x, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias, mode=0, act=1, block=2048, warps=8)
