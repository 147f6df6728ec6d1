"""One program per row, looping over chunks of 256 with per-lane partials, 2 warps."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _rowred(x_ptr, s_ptr, t_ptr, y_ptr, N, OP: tl.constexpr, BLOCK: tl.constexpr):
    """OP 0: sum, 1: max, 2: argmax, 3: sum of tanh(x * s + t)."""
    row = tl.program_id(0)
    base = row.to(tl.int64) * N
    if OP == 1 or OP == 2:
        best = tl.full((BLOCK,), -float("inf"), tl.float32)
        best_i = tl.zeros((BLOCK,), tl.int64)
    else:
        acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        m = offs < N
        x = tl.load(x_ptr + base + offs, mask=m, other=-float("inf") if OP == 1 or OP == 2 else 0.0).to(tl.float32)
        if OP == 0:
            acc += x
        elif OP == 3:
            s = tl.load(s_ptr + offs, mask=m, other=0.0)
            t = tl.load(t_ptr + offs, mask=m, other=0.0)
            acc += tl.where(m, 2.0 * tl.sigmoid(2.0 * (x * s + t)) - 1.0, 0.0)
        else:
            take = x > best
            best_i = tl.where(take, offs.to(tl.int64), best_i)
            best = tl.where(take, x, best)
    if OP == 0 or OP == 3:
        tl.store(y_ptr + row, tl.sum(acc, axis=0))
    elif OP == 1:
        tl.store(y_ptr + row, tl.max(best, axis=0))
    else:
        mx = tl.max(best, axis=0)
        idx = tl.where(best == mx, best_i, N)
        tl.store(y_ptr + row, tl.min(idx, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty(m, device=x.device, dtype=torch.float32)
        _rowred[(m,)](x, x, x, y, n, OP=1, BLOCK=256, num_warps=2)
        return y
