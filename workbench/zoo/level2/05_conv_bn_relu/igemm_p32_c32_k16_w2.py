"""Implicit-GEMM 3x3 convolution (pixels x output channels, reduction over ci*9 gathered on the fly) with eval BatchNorm and ReLU fused into the epilogue; bp 32, bc 32, bk 16, warps 2, stages 2."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _conv(x_ptr, w_ptr, y_ptr, p0_ptr, p1_ptr, p2_ptr, p3_ptr, res_ptr, NB, CI, H, W, CO, eps,
          KS: tl.constexpr, PAD: tl.constexpr, EPI: tl.constexpr, RELU: tl.constexpr, HAS_RES: tl.constexpr,
          BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_K: tl.constexpr):
    """Rows are output pixels (n, h, w), columns output channels, the reduction runs over (ci, kh, kw).
    EPI 0: nothing, 1: + bias (p0), 2: eval BatchNorm (p0 mean, p1 var, p2 weight, p3 bias)."""
    pid_p = tl.program_id(0)
    pid_c = tl.program_id(1)
    HW = H * W
    P = NB * HW
    KK = CI * KS * KS
    rp = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    rc = pid_c * BLOCK_CO + tl.arange(0, BLOCK_CO)
    n = rp // HW
    hw = rp % HW
    oh = hw // W
    ow = hw % W
    acc = tl.zeros((BLOCK_P, BLOCK_CO), dtype=tl.float32)
    for k0 in range(0, KK, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        ci = rk // (KS * KS)
        t = rk % (KS * KS)
        ih = oh[:, None] + (t // KS)[None, :] - PAD
        iw = ow[:, None] + (t % KS)[None, :] - PAD
        am = (rp[:, None] < P) & (rk[None, :] < KK) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        a = tl.load(x_ptr + ((n[:, None] * CI + ci[None, :]) * H + ih) * W + iw, mask=am, other=0.0)
        b = tl.load(w_ptr + rc[None, :] * KK + rk[:, None], mask=(rk[:, None] < KK) & (rc[None, :] < CO), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    cm = rc < CO
    if EPI == 1:
        acc += tl.load(p0_ptr + rc, mask=cm, other=0.0)[None, :]
    if EPI == 2:
        mean = tl.load(p0_ptr + rc, mask=cm, other=0.0)
        var = tl.load(p1_ptr + rc, mask=cm, other=1.0)
        g = tl.load(p2_ptr + rc, mask=cm, other=0.0)
        bb = tl.load(p3_ptr + rc, mask=cm, other=0.0)
        acc = (acc - mean[None, :]) * (g / tl.sqrt(var + eps))[None, :] + bb[None, :]
    out_off = (n[:, None] * CO + rc[None, :]) * HW + hw[:, None]
    om = (rp[:, None] < P) & cm[None, :]
    if HAS_RES:
        acc += tl.load(res_ptr + out_off, mask=om, other=0.0)
    if RELU:
        acc = tl.maximum(acc, 0.0)
    tl.store(y_ptr + out_off, acc, mask=om)


def conv(x, w, p=(None, None, None, None), epi=0, relu=False, res=None, eps=1e-5, pad=1, bp=64, bc=64, bk=32, warps=4, stages=2):
    """Stride-1 convolution of contiguous NCHW fp32 x with weight (CO, CI, KS, KS), epilogue fused."""
    x = x.contiguous()
    nb, ci, h, wd = x.shape
    co, ks = w.shape[0], w.shape[-1]
    y = torch.empty((nb, co, h, wd), device=x.device, dtype=x.dtype)
    ps = [t if t is not None else y for t in p]
    grid = (triton.cdiv(nb * h * wd, bp), triton.cdiv(co, bc))
    _conv[grid](x, w.contiguous(), y, ps[0], ps[1], ps[2], ps[3], res.contiguous() if res is not None else y,
                nb, ci, h, wd, co, eps, KS=ks, PAD=pad, EPI=epi, RELU=relu, HAS_RES=res is not None,
                BLOCK_P=bp, BLOCK_CO=bc, BLOCK_K=bk, num_warps=warps, num_stages=stages)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters and buffers in by name.
        self.conv = nn.Conv2d(1, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(1)

    def forward(self, x):
        return conv(x, self.conv.weight, p=(self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias), epi=2, relu=True, bp=32, bc=32, bk=16, warps=2, stages=2)
