"""Flat 1-D elementwise kernel over all M*N elements, 2048 per program; the bias element is
found with a modulo (col = i % N) instead of a 2-D grid."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add_bias_flat(x_ptr, b_ptr, y_ptr, total, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs % N, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, b):
        x = x.contiguous()
        b = b.contiguous()
        y = torch.empty_like(x)
        total = x.numel()
        _add_bias_flat[(triton.cdiv(total, 2048),)](x, b, y, total, x.shape[-1],
                                                   BLOCK=2048, num_warps=8)
        return y
