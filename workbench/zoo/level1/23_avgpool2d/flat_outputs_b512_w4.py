"""Average pool 3x3/2, padding 1 (zero padding counted, divisor 9) over one flat index of all
N*C*OH*OW outputs, 512 per program; taps unrolled at compile time."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _avgpool_flat(x_ptr, y_ptr, total, H, W, OH, OW, BLOCK: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = o < total
    ow = o % OW
    oh = (o // OW) % OH
    plane = x_ptr + (o // (OW * OH)) * H * W
    acc = tl.zeros((BLOCK,), tl.float32)
    for t in tl.static_range(9):
        ih = oh * 2 + (t // 3) - 1
        iw = ow * 2 + (t % 3) - 1
        ok = mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        acc += tl.load(plane + ih * W + iw, mask=ok, other=0.0)
    tl.store(y_ptr + o, acc * (1.0 / 9.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n, c, h, w = x.shape
        oh = (h + 2 - 3) // 2 + 1
        ow = (w + 2 - 3) // 2 + 1
        y = torch.empty((n, c, oh, ow), device=x.device, dtype=x.dtype)
        total = y.numel()
        _avgpool_flat[(triton.cdiv(total, 512),)](x, y, total, h, w, oh, ow, BLOCK=512, num_warps=4)
        return y
