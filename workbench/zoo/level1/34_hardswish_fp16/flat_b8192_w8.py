"""Hardswish on fp16, flat 1-D grid: 8192 elements per program, 8 warps
(fewer, wider programs; 32 halves per thread).
Loads fp16, computes x * clamp(x + 3, 0, 6) / 6 in fp32, stores fp16."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _hardswish(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    gate = tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0)
    y = x * gate / 6.0
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _hardswish[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, BLOCK=8192, num_warps=8)
        return y
