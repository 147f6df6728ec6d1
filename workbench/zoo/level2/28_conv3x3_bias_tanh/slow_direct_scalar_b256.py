"""Deliberately slow direct convolution on CUDA cores: one program per (image, output channel) and
256 pixels, scalar weight loads in a ci x 3 x 3 loop (no tensor cores, no reuse of the input
across output channels), bias and tanh fused; 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv_direct(x_ptr, w_ptr, b_ptr, y_ptr, CI, H, W, CO, BLOCK: tl.constexpr):
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
        for kh in tl.static_range(3):
            for kw in tl.static_range(3):
                ih = oh + kh - 1
                iw = ow + kw - 1
                ok = m & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
                xv = tl.load(x_ptr + ((n * CI + ci) * H + ih) * W + iw, mask=ok, other=0.0)
                wv = tl.load(w_ptr + ((co * CI + ci) * 3 + kh) * 3 + kw)
                acc += xv * wv
    acc += tl.load(b_ptr + co)
    t = tl.exp(-2.0 * tl.abs(acc))
    y = (1.0 - t) / (1.0 + t)
    tl.store(y_ptr + (n * CO + co) * HW + offs, tl.where(acc < 0, -y, y), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name.
        self.conv = nn.Conv2d(1, 1, 3, padding=1, bias=True)

    def forward(self, x):
        x = x.contiguous()
        nb, ci, h, w = x.shape
        co = self.conv.weight.shape[0]
        y = torch.empty((nb, co, h, w), device=x.device, dtype=x.dtype)
        blk = 256
        _conv_direct[(triton.cdiv(h * w, blk), nb * co)](x, self.conv.weight.contiguous(), self.conv.bias, y, ci, h, w, co,
                                                         BLOCK=blk, num_warps=4)
        return y
