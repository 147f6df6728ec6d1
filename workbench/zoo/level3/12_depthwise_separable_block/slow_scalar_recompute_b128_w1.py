"""Direct scalar kernel: one program per (image, output channel, 128 pixels), 1 warp; a loop over input channels recomputes the depthwise conv for every output channel, no tensor-core or dot use. Deliberately slow."""
import math
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _dwsep_scalar(x_ptr, wd_ptr, s1_ptr, t1_ptr, wp_ptr, s2_ptr, t2_ptr, y_ptr, CI, CO, H, W, BLOCK: tl.constexpr):
    """One program per (image, output channel, pixel block); a scalar loop over input channels recomputes the
    depthwise 3x3 + BN + ReLU for every output channel and accumulates w_pw[co, ci] times it on CUDA cores."""
    nco = tl.program_id(0)
    n = nco // CO
    co = nco % CO
    HW = H * W
    p = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    oh = p // W
    ow = p % W
    acc = tl.zeros((BLOCK,), tl.float32)
    for ci in range(0, CI):
        base = x_ptr + (n * CI + ci).to(tl.int64) * HW
        d = tl.zeros((BLOCK,), tl.float32)
        for t in range(9):
            ih = oh + t // 3 - 1
            iw = ow + t % 3 - 1
            ok = (p < HW) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            d += tl.load(base + ih * W + iw, mask=ok, other=0.0) * tl.load(wd_ptr + ci * 9 + t)
        d = tl.maximum(d * tl.load(s1_ptr + ci) + tl.load(t1_ptr + ci), 0.0)
        acc += d * tl.load(wp_ptr + co * CI + ci)
    acc = tl.maximum(acc * tl.load(s2_ptr + co) + tl.load(t2_ptr + co), 0.0)
    tl.store(y_ptr + nco.to(tl.int64) * HW + p, acc, mask=p < HW)


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
        _dwsep_scalar[(n * co, triton.cdiv(h * w, 128))](x, self.dw.weight.contiguous(), s1, t1, self.pw.weight.contiguous(),
                                                          s2, t2, y, ci, co, h, w, BLOCK=128, num_warps=1)
        return y
