"""Pooling 2x2/2: one program per (image, channel) and block of 1024 output pixels."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _pool(x_ptr, y_ptr, H, W, OH, OW, KS: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr,
          IS_MAX: tl.constexpr, BLOCK: tl.constexpr):
    nc = tl.program_id(0)
    pb = tl.program_id(1)
    p = pb * BLOCK + tl.arange(0, BLOCK)
    oh = p // OW
    ow = p % OW
    base = x_ptr + nc.to(tl.int64) * H * W
    if IS_MAX:
        acc = tl.full((BLOCK,), -float("inf"), tl.float32)
    else:
        acc = tl.zeros((BLOCK,), tl.float32)
    for t in range(KS * KS):
        ih = oh * STRIDE + t // KS - PAD
        iw = ow * STRIDE + t % KS - PAD
        ok = (p < OH * OW) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        if IS_MAX:
            acc = tl.maximum(acc, tl.load(base + ih * W + iw, mask=ok, other=-float("inf")))
        else:
            acc += tl.load(base + ih * W + iw, mask=ok, other=0.0)
    if not IS_MAX:
        acc = acc / (KS * KS)
    tl.store(y_ptr + nc.to(tl.int64) * OH * OW + p, acc, mask=p < OH * OW)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n, c, h, w = x.shape
        oh = (h + 2 * 0 - 2) // 2 + 1
        ow = (w + 2 * 0 - 2) // 2 + 1
        y = torch.empty((n, c, oh, ow), device=x.device, dtype=x.dtype)
        _pool[(n * c, triton.cdiv(oh * ow, 1024))](x, y, h, w, oh, ow, KS=2, STRIDE=2, PAD=0, IS_MAX=True, BLOCK=1024, num_warps=8)
        return y
