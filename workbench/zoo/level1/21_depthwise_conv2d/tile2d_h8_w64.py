"""Depthwise 3x3 on 2-D output tiles (8 rows x 64 columns) instead of flat pixel blocks: row
and column come straight from the tile, no division per pixel; the 9 taps and the bias are
scalars per (image, channel) program."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _dw3x3_tile(x_ptr, w_ptr, b_ptr, y_ptr, C, H, W, BH: tl.constexpr, BW: tl.constexpr):
    nc = tl.program_id(0)
    th = tl.program_id(1)
    tw = tl.program_id(2)
    c = nc % C
    oh = th * BH + tl.arange(0, BH)
    ow = tw * BW + tl.arange(0, BW)
    plane = nc.to(tl.int64) * H * W
    acc = tl.zeros((BH, BW), tl.float32)
    for t in tl.static_range(9):
        ih = oh + (t // 3) - 1
        iw = ow + (t % 3) - 1
        ok = ((ih >= 0) & (ih < H))[:, None] & ((iw >= 0) & (iw < W))[None, :]
        xv = tl.load(x_ptr + plane + ih[:, None] * W + iw[None, :], mask=ok, other=0.0)
        acc += xv * tl.load(w_ptr + c * 9 + t)
    acc += tl.load(b_ptr + c)
    out = (oh < H)[:, None] & (ow < W)[None, :]
    tl.store(y_ptr + plane + oh[:, None] * W + ow[None, :], acc, mask=out)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder shape: the executor copies the reference's weight and bias in by name.
        self.conv = nn.Conv2d(1, 1, 3, padding=1, groups=1, bias=True)

    def forward(self, x):
        x = x.contiguous()
        n, c, h, w = x.shape
        y = torch.empty_like(x)
        grid = (n * c, triton.cdiv(h, 8), triton.cdiv(w, 64))
        _dw3x3_tile[grid](x, self.conv.weight.contiguous(), self.conv.bias, y, c, h, w,
                          BH=8, BW=64, num_warps=4)
        return y
