"""Deliberately slow MaxPool1d(4, stride 2, pad 1): one program (a single warp) per 32 outputs
of the flattened (B*C, L_out) result, with a division per element and one masked load per tap
in a serial tap loop. Many tiny programs."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _maxpool1d_slow(x_ptr, y_ptr, total, L, L_OUT, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    o = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    omask = o < total
    row = o // L_OUT
    j = o % L_OUT
    acc = tl.full((BLOCK,), -float("inf"), tl.float32)
    for t in range(4):
        pos = j * 2 - 1 + t
        ok = omask & (pos >= 0) & (pos < L)
        acc = tl.maximum(acc, tl.load(x_ptr + row * L + pos, mask=ok, other=-float("inf")))
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
        BLOCK = 32
        _maxpool1d_slow[(triton.cdiv(total, BLOCK),)](x, y, total, l, l_out, BLOCK=BLOCK, num_warps=1)
        return y
