"""Depthwise 3x3: one program per (image, channel) and block of 32 pixels, 9 taps unrolled."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _dwconv3x3(x_ptr, w_ptr, b_ptr, scale_ptr, shift_ptr, y_ptr, C, H, W, HAS_B: tl.constexpr, HAS_AFFINE: tl.constexpr,
               SILU: tl.constexpr, BLOCK: tl.constexpr):
    nc = tl.program_id(0)
    pb = tl.program_id(1)
    c = nc % C
    p = pb * BLOCK + tl.arange(0, BLOCK)
    oh = p // W
    ow = p % W
    base = x_ptr + nc.to(tl.int64) * H * W
    acc = tl.zeros((BLOCK,), tl.float32)
    for t in range(9):
        ih = oh + t // 3 - 1
        iw = ow + t % 3 - 1
        ok = (p < H * W) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        acc += tl.load(base + ih * W + iw, mask=ok, other=0.0) * tl.load(w_ptr + c * 9 + t)
    if HAS_B:
        acc += tl.load(b_ptr + c)
    if HAS_AFFINE:
        acc = acc * tl.load(scale_ptr + c) + tl.load(shift_ptr + c)
    if SILU:
        acc = acc * tl.sigmoid(acc)
    tl.store(y_ptr + nc.to(tl.int64) * H * W + p, acc, mask=p < H * W)


def dwconv3x3(x, weight, bias=None, scale=None, shift=None, silu=False, block=256, warps=4):
    x = x.contiguous()
    n, c, h, w = x.shape
    y = torch.empty_like(x)
    _dwconv3x3[(n * c, triton.cdiv(h * w, block))](x, weight.contiguous(), bias if bias is not None else x,
               scale if scale is not None else x, shift if shift is not None else x, y, c, h, w,
               HAS_B=bias is not None, HAS_AFFINE=scale is not None, SILU=silu, BLOCK=block, num_warps=warps)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters in by name.
        self.conv = nn.Conv2d(1, 1, 3)

    def forward(self, x):
        return dwconv3x3(x, self.conv.weight, bias=self.conv.bias, block=32, warps=1)
