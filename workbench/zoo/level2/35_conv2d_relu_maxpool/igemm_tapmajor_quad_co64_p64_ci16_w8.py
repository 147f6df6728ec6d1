"""Tap-major implicit-GEMM 3x3 convolution with the 2x2 max pool, bias and ReLU fused: the
reduction is ordered as (input-channel block outer, the 9 taps unrolled inner), so there is no
div/mod by 9 and each gathered input row is contiguous along the pixels. Per (ci block, tap) one
(BLOCK_CO x BLOCK_CI) weight tile is loaded and used by four dots, one per 2x2 window position,
each with its own accumulator. Epilogue: max of the four, + bias, ReLU. IEEE fp32 dots;
bco=64, bp=64 pooled pixels of one image, bci=16, 8 warps, 2 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv_pool_taps(x_ptr, w_ptr, b_ptr, y_ptr, CI, CO, H, W, PH, PW,
                    BLOCK_CO: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_CI: tl.constexpr):
    pc = tl.program_id(0)
    pp = tl.program_id(1)
    n = tl.program_id(2)
    co = pc * BLOCK_CO + tl.arange(0, BLOCK_CO)
    com = co < CO
    q = pp * BLOCK_P + tl.arange(0, BLOCK_P)
    qm = q < PH * PW
    oh = (q // PW) * 2
    ow = (q % PW) * 2
    HW = H * W
    x_base = x_ptr + n.to(tl.int64) * CI * HW
    acc00 = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    acc01 = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    acc10 = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    acc11 = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    for ci0 in range(0, CI, BLOCK_CI):
        ci = ci0 + tl.arange(0, BLOCK_CI)
        cim = ci < CI
        x_c = x_base + ci[:, None] * HW
        for kh in tl.static_range(3):
            for kw in tl.static_range(3):
                wt = tl.load(w_ptr + (co[:, None] * CI + ci[None, :]) * 9 + (kh * 3 + kw),
                             mask=com[:, None] & cim[None, :], other=0.0)
                ih = oh + (kh - 1)
                iw = ow + (kw - 1)
                r0 = (ih >= 0) & (ih < H)
                r1 = (ih + 1 >= 0) & (ih + 1 < H)
                c0 = (iw >= 0) & (iw < W)
                c1 = (iw + 1 >= 0) & (iw + 1 < W)
                src = x_c + (ih * W + iw)[None, :]
                m = cim[:, None] & qm[None, :]
                acc00 += tl.dot(wt, tl.load(src, mask=m & (r0 & c0)[None, :], other=0.0), input_precision="ieee")
                acc01 += tl.dot(wt, tl.load(src + 1, mask=m & (r0 & c1)[None, :], other=0.0), input_precision="ieee")
                acc10 += tl.dot(wt, tl.load(src + W, mask=m & (r1 & c0)[None, :], other=0.0), input_precision="ieee")
                acc11 += tl.dot(wt, tl.load(src + W + 1, mask=m & (r1 & c1)[None, :], other=0.0), input_precision="ieee")
    v = tl.maximum(tl.maximum(acc00, acc01), tl.maximum(acc10, acc11))
    v = tl.maximum(v + tl.load(b_ptr + co, mask=com, other=0.0)[:, None], 0.0)
    tl.store(y_ptr + n.to(tl.int64) * CO * PH * PW + co[:, None] * PH * PW + q[None, :], v,
             mask=com[:, None] & qm[None, :])


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
        bco = 64
        bp = 64
        grid = (triton.cdiv(co, bco), triton.cdiv(ph * pw, bp), nb)
        _conv_pool_taps[grid](x, self.conv.weight.contiguous(), self.conv.bias, y, ci, co, h, w, ph, pw,
                              BLOCK_CO=bco, BLOCK_P=bp, BLOCK_CI=16, num_warps=8, num_stages=2)
        return y
