"""Unfused: implicit-GEMM convolution writes the raw result, then a second elementwise kernel applies the eval BatchNorm and ReLU (one extra round trip through memory)."""
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
        self.conv = nn.Conv2d(1, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(1)

    def forward(self, x):
        y = conv(x, self.conv.weight, bp=64, bc=64, bk=32)
        return chan_affine(y, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias, mode=0, act=1)
