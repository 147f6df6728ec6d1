"""ELU (alpha 1.0), flat 1-D grid: 32 elements per program, 1 warps (deliberately slow: 1M tiny programs each moving 128 bytes, launch and scheduling overhead dominate).
y = x where x > 0, else alpha * (exp(min(x, 0)) - 1); fp32 math."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _elu(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    neg = alpha * (tl.exp(tl.minimum(x, 0.0)) - 1.0)
    y = tl.where(x > 0.0, x, neg)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _elu[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, 1.0, BLOCK=32, num_warps=1)
        return y
