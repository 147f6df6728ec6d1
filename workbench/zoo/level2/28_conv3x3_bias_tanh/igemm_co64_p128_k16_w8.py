"""Implicit-GEMM 3x3 convolution (padding 1) with the bias add and tanh fused into the epilogue:
each program computes a (BLOCK_CO output channels x BLOCK_P pixels) tile of one image, the
reduction runs over (ci, kh, kw) with the input patch gathered on the fly. IEEE fp32 dots;
bco=64, bp=128, bk=16, 8 warps, 3 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv3x3_bias_tanh(x_ptr, w_ptr, b_ptr, y_ptr, CI, CO, H, W,
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
    t = tl.exp(-2.0 * tl.abs(acc))
    y = (1.0 - t) / (1.0 + t)
    y = tl.where(acc < 0, -y, y)
    omask = (co[:, None] < CO) & (p[None, :] < H * W)
    tl.store(y_ptr + n.to(tl.int64) * CO * H * W + co[:, None] * H * W + p[None, :], y, mask=omask)


def conv3x3_bias_tanh(x, weight, bias, bco=64, bp=64, bk=32, warps=4, stages=2):
    x = x.contiguous()
    n, ci, h, w = x.shape
    co = weight.shape[0]
    y = torch.empty((n, co, h, w), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(co, bco), triton.cdiv(h * w, bp), n)
    _conv3x3_bias_tanh[grid](x, weight.contiguous(), bias, y, ci, co, h, w,
                             BLOCK_CO=bco, BLOCK_P=bp, BLOCK_K=bk, num_warps=warps, num_stages=stages)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name.
        self.conv = nn.Conv2d(1, 1, 3, padding=1, bias=True)

    def forward(self, x):
        return conv3x3_bias_tanh(x, self.conv.weight, self.conv.bias, bco=64, bp=128, bk=16, warps=8, stages=3)
