"""Whole row in one block (one read, one write when it fits in registers), 8 warps."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _softmax_one(x_ptr, y_ptr, n_cols, sx, sy, scale, CAUSAL: tl.constexpr, SEQ, LOG: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    limit = n_cols
    if CAUSAL:
        limit = (row % SEQ) + 1
    valid = offs < limit
    x = tl.load(x_ptr + row * sx + offs, mask=offs < n_cols, other=0.0).to(tl.float32) * scale
    x = tl.where(valid, x, -float("inf"))
    mx = tl.max(x, axis=0)
    e = tl.where(valid, tl.exp(x - mx), 0.0)
    tot = tl.sum(e, axis=0)
    if LOG:
        y = x - mx - tl.log(tot)
    else:
        y = e / tot
    tl.store(y_ptr + row * sy + offs, y.to(y_ptr.dtype.element_ty), mask=offs < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores):
        x2 = scores.contiguous().view(-1, scores.shape[-1])
        rows, n = x2.shape
        y = torch.empty_like(x2)
        _softmax_one[(rows,)](x2, y, n, x2.stride(0), y.stride(0), 0.125, True, scores.shape[-1], False,
                        BLOCK=triton.next_power_of_2(n), num_warps=8)
        return y.view(scores.shape)
