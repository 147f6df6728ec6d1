"""MaxPool1d(4, stride 2, pad 1) with the window as a tile axis: program (row, block) builds a
512x4 tile of input positions 2j-1+k (k = 0..3) for 512 outputs of one (b, c) row, loads it in
one masked load (-inf outside the row) and reduces it with tl.max along the window axis;
4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _maxpool1d_window(x_ptr, y_ptr, L, L_OUT, KS: tl.constexpr, STRIDE: tl.constexpr,
                      PAD: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    k = tl.arange(0, KS)
    pos = j[:, None] * STRIDE - PAD + k[None, :]
    ok = (j[:, None] < L_OUT) & (pos >= 0) & (pos < L)
    win = tl.load(x_ptr + row * L + pos, mask=ok, other=-float("inf"))
    tl.store(y_ptr + row * L_OUT + j, tl.max(win, axis=1), mask=j < L_OUT)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        b, c, l = x.shape
        l_out = (l + 2 * 1 - 4) // 2 + 1
        y = torch.empty((b, c, l_out), device=x.device, dtype=x.dtype)
        BLOCK = 512
        _maxpool1d_window[(b * c, triton.cdiv(l_out, BLOCK))](x, y, l, l_out, KS=4, STRIDE=2, PAD=1,
                                                               BLOCK=BLOCK, num_warps=4)
        return y
