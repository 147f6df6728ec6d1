"""Unfused: an implicit-GEMM convolution kernel writes the raw convolution (no bias), then a flat
elementwise kernel adds the per-channel bias and applies tanh: one extra write and read of the
(16, 64, 64, 64) output. IEEE fp32 dots; conv bco=64, bp=64, bk=32, 4 warps; epilogue blocks of
1024, 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv3x3(x_ptr, w_ptr, y_ptr, CI, CO, H, W,
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
    omask = (co[:, None] < CO) & (p[None, :] < H * W)
    tl.store(y_ptr + n.to(tl.int64) * CO * H * W + co[:, None] * H * W + p[None, :], acc, mask=omask)


@triton.jit
def _bias_tanh(x_ptr, b_ptr, y_ptr, total, C, HW, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    c = (offs // HW) % C
    v = tl.load(x_ptr + offs, mask=m, other=0.0) + tl.load(b_ptr + c, mask=m, other=0.0)
    t = tl.exp(-2.0 * tl.abs(v))
    y = (1.0 - t) / (1.0 + t)
    tl.store(y_ptr + offs, tl.where(v < 0, -y, y), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name.
        self.conv = nn.Conv2d(1, 1, 3, padding=1, bias=True)

    def forward(self, x):
        x = x.contiguous()
        nb, ci, h, w = x.shape
        co = self.conv.weight.shape[0]
        raw = torch.empty((nb, co, h, w), device=x.device, dtype=x.dtype)
        bco = 64
        bp = 64
        _conv3x3[(triton.cdiv(co, bco), triton.cdiv(h * w, bp), nb)](x, self.conv.weight.contiguous(), raw, ci, co, h, w,
                                                                     BLOCK_CO=bco, BLOCK_P=bp, BLOCK_K=32, num_warps=4, num_stages=2)
        y = torch.empty_like(raw)
        total = raw.numel()
        eb = 1024
        _bias_tanh[(triton.cdiv(total, eb),)](raw, self.conv.bias, y, total, co, h * w, BLOCK=eb, num_warps=4)
        return y
