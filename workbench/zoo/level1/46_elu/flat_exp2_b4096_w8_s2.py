"""ELU (alpha 1.0), flat 1-D grid, exp2 form: the negative branch is alpha * (2^(x * log2(e)) - 1)
on the hardware ex2 path; 4096 elements per program (16 per thread), 8 warps, 2 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _elu_exp2(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    xn = tl.minimum(x, 0.0)
    y = tl.where(x > 0.0, x, alpha * (tl.exp2(xn * 1.4426950408889634) - 1.0))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _elu_exp2[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, 1.0, BLOCK=4096, num_warps=8,
                                                                 num_stages=2)
        return y
