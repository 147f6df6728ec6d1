"""Direct convolution on CUDA cores: one program per (image, output channel) and 256 pixels, scalar weight loads in a ci x 3 x 3 loop, eval BatchNorm and ReLU fused. No tensor cores: deliberately slow."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _conv_direct(x_ptr, w_ptr, y_ptr, p0_ptr, p1_ptr, p2_ptr, p3_ptr, CI, H, W, CO, eps,
                 KS: tl.constexpr, PAD: tl.constexpr, EPI: tl.constexpr, BLOCK: tl.constexpr):
    """Scalar-weight direct convolution with ReLU; EPI 1: + bias (p0), 2: eval BatchNorm (p0..p3)."""
    pid = tl.program_id(0)
    nc = tl.program_id(1)
    n = nc // CO
    co = nc % CO
    HW = H * W
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < HW
    oh = offs // W
    ow = offs % W
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for ci in range(0, CI):
        for kh in tl.static_range(KS):
            for kw in tl.static_range(KS):
                ih = oh + kh - PAD
                iw = ow + kw - PAD
                ok = m & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
                xv = tl.load(x_ptr + ((n * CI + ci) * H + ih) * W + iw, mask=ok, other=0.0)
                wv = tl.load(w_ptr + ((co * CI + ci) * KS + kh) * KS + kw)
                acc += xv * wv
    if EPI == 1:
        acc += tl.load(p0_ptr + co)
    if EPI == 2:
        scale = tl.load(p2_ptr + co) / tl.sqrt(tl.load(p1_ptr + co) + eps)
        acc = (acc - tl.load(p0_ptr + co)) * scale + tl.load(p3_ptr + co)
    tl.store(y_ptr + (n * CO + co) * HW + offs, tl.maximum(acc, 0.0), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters and buffers in by name.
        self.conv = nn.Conv2d(1, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(1)

    def forward(self, x):
        x = x.contiguous()
        nb, ci, h, w = x.shape
        co = self.conv.weight.shape[0]
        y = torch.empty((nb, co, h, w), device=x.device, dtype=x.dtype)
        _conv_direct[(triton.cdiv(h * w, 256), nb * co)](x, self.conv.weight.contiguous(), y, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias, ci, h, w, co, 1e-5,
                                                         KS=3, PAD=1, EPI=2, BLOCK=256, num_warps=4)
        return y
