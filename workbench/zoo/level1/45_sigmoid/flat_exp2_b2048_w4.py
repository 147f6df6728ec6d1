"""Sigmoid, flat 1-D grid, exp2 form: y = 1 / (1 + 2^(-x * log2(e))), which maps straight onto
the hardware ex2 instruction; 2048 elements per program, 4 warps, 2 pipeline stages. fp32 math."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sigmoid_exp2(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = 1.0 / (1.0 + tl.exp2(x * -1.4426950408889634))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _sigmoid_exp2[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, BLOCK=2048, num_warps=4,
                                                                     num_stages=2)
        return y
