"""Deliberately slow: the flat index walks the matrix in column-major order, so neighbouring
lanes touch addresses N floats apart (uncoalesced loads and stores); blocks of 256, 2 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add_bias_colmajor(x_ptr, b_ptr, y_ptr, M, N, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < M * N
    row = i % M
    col = i // M
    x = tl.load(x_ptr + row * N + col, mask=mask, other=0.0)
    b = tl.load(b_ptr + col, mask=mask, other=0.0)
    tl.store(y_ptr + row * N + col, x + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, b):
        x = x.contiguous()
        b = b.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        _add_bias_colmajor[(triton.cdiv(m * n, 256),)](x, b, y, m, n, BLOCK=256, num_warps=2)
        return y
