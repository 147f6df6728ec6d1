"""Two kernels: depthwise 3x3 with folded BN + ReLU writes the intermediate (1024 pixels per program), then a pointwise GEMM (64 channels x 128 pixels, K chunks 32) with folded BN2 + ReLU in the epilogue."""
import math
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _dw_bn_relu(x_ptr, w_ptr, scale_ptr, shift_ptr, y_ptr, C, H, W, AFFINE: tl.constexpr, BLOCK: tl.constexpr):
    """Depthwise 3x3 (padding 1) for one (image, channel) plane and a block of pixels; AFFINE: BN + ReLU."""
    nc = tl.program_id(0)
    c = nc % C
    p = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    oh = p // W
    ow = p % W
    base = x_ptr + nc.to(tl.int64) * H * W
    acc = tl.zeros((BLOCK,), tl.float32)
    for t in range(9):
        ih = oh + t // 3 - 1
        iw = ow + t % 3 - 1
        ok = (p < H * W) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        acc += tl.load(base + ih * W + iw, mask=ok, other=0.0) * tl.load(w_ptr + c * 9 + t)
    if AFFINE:
        acc = tl.maximum(acc * tl.load(scale_ptr + c) + tl.load(shift_ptr + c), 0.0)
    tl.store(y_ptr + nc.to(tl.int64) * H * W + p, acc, mask=p < H * W)


@triton.jit
def _pw_gemm(x_ptr, w_ptr, scale_ptr, shift_ptr, y_ptr, CI, CO, HW, AFFINE: tl.constexpr,
             BLOCK_CO: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_K: tl.constexpr):
    """1x1 convolution as a GEMM per image: y[n] (CO, HW) = w (CO, CI) @ x[n] (CI, HW); AFFINE: BN + ReLU."""
    co = tl.program_id(0) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    p = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    n = tl.program_id(2)
    x_base = x_ptr + n.to(tl.int64) * CI * HW
    acc = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    for k0 in range(0, CI, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        wt = tl.load(w_ptr + co[:, None] * CI + k[None, :], mask=(co[:, None] < CO) & (k[None, :] < CI), other=0.0)
        xt = tl.load(x_base + k[:, None] * HW + p[None, :], mask=(k[:, None] < CI) & (p[None, :] < HW), other=0.0)
        acc += tl.dot(wt, xt, input_precision="ieee")
    cm = co < CO
    if AFFINE:
        s = tl.load(scale_ptr + co, mask=cm, other=0.0)
        t = tl.load(shift_ptr + co, mask=cm, other=0.0)
        acc = tl.maximum(acc * s[:, None] + t[:, None], 0.0)
    tl.store(y_ptr + n.to(tl.int64) * CO * HW + co[:, None] * HW + p[None, :], acc, mask=cm[:, None] & (p[None, :] < HW))


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
        mid = torch.empty_like(x)
        _dw_bn_relu[(n * ci, triton.cdiv(h * w, 1024))](x, self.dw.weight.contiguous(), s1, t1, mid, ci, h, w,
                                                        AFFINE=True, BLOCK=1024, num_warps=8)
        y = torch.empty((n, co, h, w), device=x.device, dtype=x.dtype)
        _pw_gemm[(triton.cdiv(co, 64), triton.cdiv(h * w, 128), n)](mid, self.pw.weight.contiguous(), s2, t2, y, ci, co, h * w,
                                                                  AFFINE=True, BLOCK_CO=64, BLOCK_P=128, BLOCK_K=32, num_warps=4, num_stages=3)
        return y
