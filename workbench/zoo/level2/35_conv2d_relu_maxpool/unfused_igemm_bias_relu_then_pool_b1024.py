"""Unfused: an implicit-GEMM convolution kernel with bias and ReLU fused writes the full-resolution
(16, 128, 64, 64) activation, then a flat Triton max-pool kernel reads it back and writes the
2x2-pooled output: one extra write and read of the activation. IEEE fp32 dots; conv bco=64,
bp=64, bk=32, 4 warps, 2 stages; pool blocks of 1024 outputs, 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv3x3_bias_relu(x_ptr, w_ptr, b_ptr, y_ptr, CI, CO, H, W,
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
    acc += tl.load(b_ptr + co, mask=co < CO, other=0.0)[:, None]
    acc = tl.maximum(acc, 0.0)
    omask = (co[:, None] < CO) & (p[None, :] < H * W)
    tl.store(y_ptr + n.to(tl.int64) * CO * H * W + co[:, None] * H * W + p[None, :], acc, mask=omask)


@triton.jit
def _maxpool2x2(x_ptr, y_ptr, total, H, W, PH, PW, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    plane = offs // (PH * PW)
    rem = offs % (PH * PW)
    ih = (rem // PW) * 2
    iw = (rem % PW) * 2
    src = x_ptr + plane * H * W + ih * W + iw
    v = tl.maximum(tl.load(src, mask=m, other=0.0), tl.load(src + 1, mask=m, other=0.0))
    v = tl.maximum(v, tl.maximum(tl.load(src + W, mask=m, other=0.0), tl.load(src + W + 1, mask=m, other=0.0)))
    tl.store(y_ptr + offs, v, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters in by name.
        self.conv = nn.Conv2d(1, 1, 3, padding=1, bias=True)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        x = x.contiguous()
        nb, ci, h, w = x.shape
        co = self.conv.weight.shape[0]
        act = torch.empty((nb, co, h, w), device=x.device, dtype=x.dtype)
        bco = 64
        bp = 64
        _conv3x3_bias_relu[(triton.cdiv(co, bco), triton.cdiv(h * w, bp), nb)](
            x, self.conv.weight.contiguous(), self.conv.bias, act, ci, co, h, w,
            BLOCK_CO=bco, BLOCK_P=bp, BLOCK_K=32, num_warps=4, num_stages=2)
        ph, pw = h // 2, w // 2
        y = torch.empty((nb, co, ph, pw), device=x.device, dtype=x.dtype)
        total = y.numel()
        pb = 1024
        _maxpool2x2[(triton.cdiv(total, pb),)](act, y, total, h, w, ph, pw, BLOCK=pb, num_warps=4)
        return y
