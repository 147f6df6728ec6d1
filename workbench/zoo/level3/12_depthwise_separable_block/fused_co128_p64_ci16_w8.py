"""Fully fused block in one kernel: depthwise 3x3 + folded BN + ReLU computed in registers per chunk of 16 input channels and fed straight into the pointwise GEMM (exact fp32 dot), folded BN2 + ReLU in the epilogue; 128 output channels x 64 pixels per program, so each depthwise value is computed once; 8 warps."""
import math
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _dwsep(x_ptr, wd_ptr, s1_ptr, t1_ptr, wp_ptr, s2_ptr, t2_ptr, y_ptr, CI, CO, H, W,
           BLOCK_CO: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_CI: tl.constexpr):
    """One (output-channel block, pixel block, image) tile. Per chunk of input channels the depthwise 3x3 +
    BN + ReLU result for the pixel block is built in registers, then fed straight into the pointwise GEMM
    (exact fp32 dot); BN2 + ReLU in the epilogue. The intermediate never touches memory."""
    pc = tl.program_id(0)
    pp = tl.program_id(1)
    n = tl.program_id(2)
    HW = H * W
    co = pc * BLOCK_CO + tl.arange(0, BLOCK_CO)
    p = pp * BLOCK_P + tl.arange(0, BLOCK_P)
    oh = p // W
    ow = p % W
    x_base = x_ptr + n.to(tl.int64) * CI * HW
    acc = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    for c0 in range(0, CI, BLOCK_CI):
        ci = c0 + tl.arange(0, BLOCK_CI)
        cm = ci < CI
        d = tl.zeros((BLOCK_CI, BLOCK_P), tl.float32)
        for t in range(9):
            ih = oh + t // 3 - 1
            iw = ow + t % 3 - 1
            ok = (p < HW) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            xv = tl.load(x_base + ci[:, None] * HW + (ih * W + iw)[None, :], mask=cm[:, None] & ok[None, :], other=0.0)
            d += xv * tl.load(wd_ptr + ci * 9 + t, mask=cm, other=0.0)[:, None]
        s1 = tl.load(s1_ptr + ci, mask=cm, other=0.0)
        t1 = tl.load(t1_ptr + ci, mask=cm, other=0.0)
        d = tl.maximum(d * s1[:, None] + t1[:, None], 0.0)
        wp = tl.load(wp_ptr + co[:, None] * CI + ci[None, :], mask=(co[:, None] < CO) & cm[None, :], other=0.0)
        acc += tl.dot(wp, d, input_precision="ieee")
    cmask = co < CO
    s2 = tl.load(s2_ptr + co, mask=cmask, other=0.0)
    t2 = tl.load(t2_ptr + co, mask=cmask, other=0.0)
    acc = tl.maximum(acc * s2[:, None] + t2[:, None], 0.0)
    out = y_ptr + n.to(tl.int64) * CO * HW + co[:, None] * HW + p[None, :]
    tl.store(out, acc, mask=cmask[:, None] & (p[None, :] < HW))


def fold_bn(bn):
    """Eval-mode BatchNorm as a per-channel scale and shift."""
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    return scale, bn.bias - bn.running_mean * scale


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters and buffers in by name.
        self.dw = nn.Conv2d(1, 1, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(1)
        self.pw = nn.Conv2d(1, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(1)

    def forward(self, x):
        x = x.contiguous()
        n, ci, h, w = x.shape
        co = self.pw.weight.shape[0]
        s1, t1 = fold_bn(self.bn1)
        s2, t2 = fold_bn(self.bn2)
        y = torch.empty((n, co, h, w), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(co, 128), triton.cdiv(h * w, 64), n)
        _dwsep[grid](x, self.dw.weight.contiguous(), s1, t1, self.pw.weight.contiguous(), s2, t2, y, ci, co, h, w,
                     BLOCK_CO=128, BLOCK_P=64, BLOCK_CI=16, num_warps=8, num_stages=2)
        return y
