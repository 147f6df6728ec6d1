"""ELU (alpha 1.0), one program per row: each program walks its row of the (M, N) view in
chunks of 2048 columns (64-bit row base), 8 warps. M programs, N / 2048 iterations each.
y = x where x > 0, else alpha * (exp(min(x, 0)) - 1)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _elu_rows(x_ptr, y_ptr, N, stride, alpha, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    xb = x_ptr + row * stride
    yb = y_ptr + row * stride
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(xb + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.where(x > 0.0, x, alpha * (tl.exp(tl.minimum(x, 0.0)) - 1.0))
        tl.store(yb + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.contiguous().view(-1, x.shape[-1])
        m, n = x2.shape
        y = torch.empty_like(x2)
        _elu_rows[(m,)](x2, y, n, x2.stride(0), 1.0, BLOCK=2048, num_warps=8)
        return y.view(x.shape)
