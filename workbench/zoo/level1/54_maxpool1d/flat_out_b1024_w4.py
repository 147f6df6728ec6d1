"""MaxPool1d(4, stride 2, pad 1) over a flat output index: each program (4 warps) owns 1024
consecutive outputs of the flattened (B*C, L_out) result, recovers (row, j) by division, and
takes the max of the four taps x[row, 2j-1 .. 2j+2] loaded separately with bounds masks
(-inf outside the row). 64-bit flat offsets."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _maxpool1d_flat(x_ptr, y_ptr, total, L, L_OUT, KS: tl.constexpr, STRIDE: tl.constexpr,
                    PAD: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    o = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    omask = o < total
    row = o // L_OUT
    j = o % L_OUT
    base = row * L
    acc = tl.full((BLOCK,), -float("inf"), tl.float32)
    for t in tl.static_range(KS):
        pos = j * STRIDE - PAD + t
        ok = omask & (pos >= 0) & (pos < L)
        acc = tl.maximum(acc, tl.load(x_ptr + base + pos, mask=ok, other=-float("inf")))
    tl.store(y_ptr + o, acc, mask=omask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        b, c, l = x.shape
        l_out = (l + 2 * 1 - 4) // 2 + 1
        y = torch.empty((b, c, l_out), device=x.device, dtype=x.dtype)
        total = b * c * l_out
        BLOCK = 1024
        _maxpool1d_flat[(triton.cdiv(total, BLOCK),)](x, y, total, l, l_out, KS=4, STRIDE=2, PAD=1,
                                                      BLOCK=BLOCK, num_warps=4)
        return y
