"""Implicit-GEMM 3x3 convolution with the 2x2 max pool, bias and ReLU fused into the epilogue.
Each program computes a (BLOCK_CO output channels x BLOCK_P pooled pixels) tile of one image as
four accumulators, one per position in the 2x2 pooling window; the reduction runs over
(ci, kh, kw) with the input patches gathered on the fly, and each weight tile is loaded once and
used by all four dots. Epilogue: max of the four, + bias, ReLU (ReLU commutes with the max), so
the full-resolution conv output never reaches memory. IEEE fp32 dots; bco=64, bp=32, bk=32,
4 warps, 2 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv_relu_pool(x_ptr, w_ptr, b_ptr, y_ptr, CI, CO, H, W, PH, PW,
                    BLOCK_CO: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_K: tl.constexpr):
    pc = tl.program_id(0)
    pp = tl.program_id(1)
    n = tl.program_id(2)
    co = pc * BLOCK_CO + tl.arange(0, BLOCK_CO)
    q = pp * BLOCK_P + tl.arange(0, BLOCK_P)
    qm = q < PH * PW
    oh = (q // PW) * 2
    ow = (q % PW) * 2
    KTOT = CI * 9
    acc00 = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    acc01 = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    acc10 = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    acc11 = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    x_base = x_ptr + n.to(tl.int64) * CI * H * W
    for k0 in range(0, KTOT, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        km = k < KTOT
        ci = k // 9
        kh = (k % 9) // 3
        kw = k % 3
        wt = tl.load(w_ptr + co[:, None] * KTOT + k[None, :], mask=(co[:, None] < CO) & km[None, :], other=0.0)
        ih = oh[None, :] + kh[:, None] - 1
        iw = ow[None, :] + kw[:, None] - 1
        m = km[:, None] & qm[None, :]
        r0 = (ih >= 0) & (ih < H)
        r1 = (ih + 1 >= 0) & (ih + 1 < H)
        c0 = (iw >= 0) & (iw < W)
        c1 = (iw + 1 >= 0) & (iw + 1 < W)
        src = x_base + ci[:, None] * H * W + ih * W + iw
        x00 = tl.load(src, mask=m & r0 & c0, other=0.0)
        x01 = tl.load(src + 1, mask=m & r0 & c1, other=0.0)
        x10 = tl.load(src + W, mask=m & r1 & c0, other=0.0)
        x11 = tl.load(src + W + 1, mask=m & r1 & c1, other=0.0)
        acc00 += tl.dot(wt, x00, input_precision="ieee")
        acc01 += tl.dot(wt, x01, input_precision="ieee")
        acc10 += tl.dot(wt, x10, input_precision="ieee")
        acc11 += tl.dot(wt, x11, input_precision="ieee")
    v = tl.maximum(tl.maximum(acc00, acc01), tl.maximum(acc10, acc11))
    v += tl.load(b_ptr + co, mask=co < CO, other=0.0)[:, None]
    v = tl.maximum(v, 0.0)
    omask = (co[:, None] < CO) & qm[None, :]
    tl.store(y_ptr + n.to(tl.int64) * CO * PH * PW + co[:, None] * PH * PW + q[None, :], v, mask=omask)


def conv_relu_pool(x, weight, bias, bco=64, bp=32, bk=32, warps=4, stages=2):
    x = x.contiguous()
    n, ci, h, w = x.shape
    co = weight.shape[0]
    ph, pw = h // 2, w // 2
    y = torch.empty((n, co, ph, pw), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(co, bco), triton.cdiv(ph * pw, bp), n)
    _conv_relu_pool[grid](x, weight.contiguous(), bias, y, ci, co, h, w, ph, pw,
                          BLOCK_CO=bco, BLOCK_P=bp, BLOCK_K=bk, num_warps=warps, num_stages=stages)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters in by name.
        self.conv = nn.Conv2d(1, 1, 3, padding=1, bias=True)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return conv_relu_pool(x, self.conv.weight, self.conv.bias, bco=64, bp=32, bk=32, warps=4, stages=2)
