"""Persistent elementwise kernel: a fixed grid of 4 programs per SM, each looping over blocks of 2048."""
import math
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _unary_loop(x_ptr, y_ptr, n, n_programs, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = pid * BLOCK
    step = n_programs * BLOCK
    for base in range(start, n, step):
        offs = base + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.maximum(x, 0.0)
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        if x.is_cuda:
            progs = 4 * torch.cuda.get_device_properties(x.device).multi_processor_count
        else:
            progs = 4
        progs = max(1, min(progs, triton.cdiv(n, 2048)))
        _unary_loop[(progs,)](x, y, n, progs, BLOCK=2048, num_warps=8)
        return y
