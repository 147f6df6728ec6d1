"""Sigmoid, flat 1-D grid: 1024 elements per program, 4 warps.
y = 1 / (1 + exp(-x)) in fp32 (exp overflows to inf for x < -88, giving exactly 0)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sigmoid(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = 1.0 / (1.0 + tl.exp(-x))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _sigmoid[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, BLOCK=1024, num_warps=4)
        return y
