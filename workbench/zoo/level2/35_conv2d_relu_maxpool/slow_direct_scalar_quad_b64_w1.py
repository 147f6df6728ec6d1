"""Deliberately slow direct convolution on CUDA cores: one program per (image, output channel) and
64 pooled pixels, 1 warp; a serial ci x 3 x 3 loop with a scalar weight load and four input
loads per step (one per 2x2 window position, four accumulators), no tensor cores and no reuse
of the input across output channels. Epilogue: max of the four, + bias, ReLU."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv_direct_pool(x_ptr, w_ptr, b_ptr, y_ptr, CI, H, W, CO, PH, PW, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nc = tl.program_id(1)
    n = nc // CO
    co = nc % CO
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < PH * PW
    oh = (offs // PW) * 2
    ow = (offs % PW) * 2
    a00 = tl.zeros((BLOCK,), dtype=tl.float32)
    a01 = tl.zeros((BLOCK,), dtype=tl.float32)
    a10 = tl.zeros((BLOCK,), dtype=tl.float32)
    a11 = tl.zeros((BLOCK,), dtype=tl.float32)
    for ci in range(0, CI):
        plane = x_ptr + (n * CI + ci).to(tl.int64) * H * W
        for kh in tl.static_range(3):
            for kw in tl.static_range(3):
                wv = tl.load(w_ptr + ((co * CI + ci) * 3 + kh) * 3 + kw)
                ih = oh + kh - 1
                iw = ow + kw - 1
                r0 = (ih >= 0) & (ih < H)
                r1 = (ih + 1 >= 0) & (ih + 1 < H)
                c0 = (iw >= 0) & (iw < W)
                c1 = (iw + 1 >= 0) & (iw + 1 < W)
                src = plane + ih * W + iw
                a00 += tl.load(src, mask=m & r0 & c0, other=0.0) * wv
                a01 += tl.load(src + 1, mask=m & r0 & c1, other=0.0) * wv
                a10 += tl.load(src + W, mask=m & r1 & c0, other=0.0) * wv
                a11 += tl.load(src + W + 1, mask=m & r1 & c1, other=0.0) * wv
    v = tl.maximum(tl.maximum(a00, a01), tl.maximum(a10, a11)) + tl.load(b_ptr + co)
    tl.store(y_ptr + nc.to(tl.int64) * PH * PW + offs, tl.maximum(v, 0.0), mask=m)


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
        ph, pw = h // 2, w // 2
        y = torch.empty((nb, co, ph, pw), device=x.device, dtype=x.dtype)
        blk = 64
        _conv_direct_pool[(triton.cdiv(ph * pw, blk), nb * co)](x, self.conv.weight.contiguous(), self.conv.bias, y,
                                                                ci, h, w, co, ph, pw, BLOCK=blk, num_warps=1)
        return y
