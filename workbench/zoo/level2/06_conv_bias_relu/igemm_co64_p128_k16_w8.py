"""Implicit-GEMM 3x3 convolution with bias and ReLU fused in the epilogue; bco=64, bp=128, bk=16, warps=8, stages=2."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _conv3x3(x_ptr, w_ptr, scale_ptr, shift_ptr, res_ptr, y_ptr, CI, CO, H, W,
             HAS_SCALE: tl.constexpr, HAS_SHIFT: tl.constexpr, HAS_RES: tl.constexpr, RELU: tl.constexpr,
             BLOCK_CO: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_K: tl.constexpr):
    pc = tl.program_id(0)
    pp = tl.program_id(1)
    n = tl.program_id(2)
    co = pc * BLOCK_CO + tl.arange(0, BLOCK_CO)
    p = pp * BLOCK_P + tl.arange(0, BLOCK_P)
    oh = p // W
    ow = p % W
    KTOT = CI * 9
    acc = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    x_base = x_ptr + n.to(tl.int64) * CI * H * W
    for k0 in range(0, KTOT, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        ci = k // 9
        kh = (k % 9) // 3
        kw = k % 3
        wt = tl.load(w_ptr + co[:, None] * KTOT + k[None, :], mask=(co[:, None] < CO) & (k[None, :] < KTOT), other=0.0)
        ih = oh[None, :] + kh[:, None] - 1
        iw = ow[None, :] + kw[:, None] - 1
        ok = (k[:, None] < KTOT) & (p[None, :] < H * W) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        xt = tl.load(x_base + ci[:, None] * H * W + ih * W + iw, mask=ok, other=0.0)
        acc += tl.dot(wt, xt, input_precision="ieee")
    if HAS_SCALE:
        acc = acc * tl.load(scale_ptr + co, mask=co < CO, other=0.0)[:, None]
    if HAS_SHIFT:
        acc = acc + tl.load(shift_ptr + co, mask=co < CO, other=0.0)[:, None]
    omask = (co[:, None] < CO) & (p[None, :] < H * W)
    out_off = n.to(tl.int64) * CO * H * W + co[:, None] * H * W + p[None, :]
    if HAS_RES:
        acc += tl.load(res_ptr + out_off, mask=omask, other=0.0)
    if RELU:
        acc = tl.maximum(acc, 0.0)
    tl.store(y_ptr + out_off, acc, mask=omask)


def conv3x3(x, weight, scale=None, shift=None, res=None, relu=False, bco=64, bp=64, bk=32, warps=4, stages=2):
    x = x.contiguous()
    n, ci, h, w = x.shape
    co = weight.shape[0]
    y = torch.empty((n, co, h, w), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(co, bco), triton.cdiv(h * w, bp), n)
    _conv3x3[grid](x, weight.contiguous(), scale if scale is not None else x, shift if shift is not None else x,
                   res.contiguous() if res is not None else x, y, ci, co, h, w,
                   HAS_SCALE=scale is not None, HAS_SHIFT=shift is not None, HAS_RES=res is not None, RELU=relu,
                   BLOCK_CO=bco, BLOCK_P=bp, BLOCK_K=bk, num_warps=warps, num_stages=stages)
    return y


def fold_bn(bn):
    """Eval-mode BatchNorm as a per-channel scale and shift."""
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    return scale, bn.bias - bn.running_mean * scale


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters in by name.
        self.conv = nn.Conv2d(1, 1, 3)

    def forward(self, x):
        return conv3x3(x, self.conv.weight, shift=self.conv.bias, relu=True, bco=64, bp=128, bk=16, warps=8, stages=2)
