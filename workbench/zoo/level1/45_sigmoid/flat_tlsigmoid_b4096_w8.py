"""Sigmoid, flat 1-D grid using Triton's builtin tl.sigmoid: 4096 elements per program, 8 warps
(fewer, wider programs; 16 elements per thread). fp32 math."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sigmoid_builtin(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, tl.sigmoid(x).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _sigmoid_builtin[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, BLOCK=4096, num_warps=8)
        return y
