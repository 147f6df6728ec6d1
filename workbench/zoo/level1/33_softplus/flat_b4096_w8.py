"""Softplus (beta 1, threshold 20), flat 1-D grid: 4096 elements per program, 8 warps
(fewer, wider programs; 16 elements per thread).
Stable form max(x, 0) + log(1 + exp(-|x|)), x itself above the threshold; fp32 math."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softplus(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.maximum(x, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(x)))
    y = tl.where(x > 20.0, x, y)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _softplus[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, BLOCK=4096, num_warps=8)
        return y
