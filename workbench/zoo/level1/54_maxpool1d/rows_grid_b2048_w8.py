"""MaxPool1d(4, stride 2, pad 1) on a 2-D grid: program (row, block) handles 2048 consecutive
outputs of one (b, c) row (8 warps), so no division per element; the four taps
x[2j-1 .. 2j+2] are four strided loads with bounds masks. Row base offset in 64 bits."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _maxpool1d_rows(x_ptr, y_ptr, L, L_OUT, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    jm = j < L_OUT
    xr = x_ptr + row * L
    p0 = 2 * j - 1
    a = tl.load(xr + p0, mask=jm & (p0 >= 0), other=-float("inf"))
    b = tl.load(xr + p0 + 1, mask=jm & (p0 + 1 < L), other=-float("inf"))
    c = tl.load(xr + p0 + 2, mask=jm & (p0 + 2 < L), other=-float("inf"))
    d = tl.load(xr + p0 + 3, mask=jm & (p0 + 3 < L), other=-float("inf"))
    tl.store(y_ptr + row * L_OUT + j, tl.maximum(tl.maximum(a, b), tl.maximum(c, d)), mask=jm)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        b, c, l = x.shape
        l_out = (l + 2 * 1 - 4) // 2 + 1
        y = torch.empty((b, c, l_out), device=x.device, dtype=x.dtype)
        BLOCK = 2048
        _maxpool1d_rows[(b * c, triton.cdiv(l_out, BLOCK))](x, y, l, l_out, BLOCK=BLOCK, num_warps=8)
        return y
