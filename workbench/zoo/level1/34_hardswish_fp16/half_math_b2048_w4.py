"""Hardswish on fp16 with the arithmetic kept in fp16 (no upcast): x * clamp(x + 3, 0, 6) * (1/6)
on halves, 2048 elements per program, 4 warps. Same memory traffic as the fp32-math kernels;
the result can differ from the reference by an fp16 rounding or two (within the fp16 tolerance)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _hardswish_half(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    three = tl.full((BLOCK,), 3.0, tl.float16)
    six = tl.full((BLOCK,), 6.0, tl.float16)
    zero = tl.zeros((BLOCK,), tl.float16)
    gate = tl.minimum(tl.maximum(x + three, zero), six)
    y = x * (gate / six)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _hardswish_half[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, BLOCK=2048, num_warps=4)
        return y
