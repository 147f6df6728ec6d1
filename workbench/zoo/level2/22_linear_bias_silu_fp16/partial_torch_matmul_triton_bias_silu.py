"""PARTIAL candidate: the GEMM (without bias) runs in PyTorch/cuBLAS; one elementwise Triton kernel adds the bias, rounds to fp16 and applies SiLU (block 2048, 8 warps)."""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bias_silu(h_ptr, b_ptr, y_ptr, M, N, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    """Elementwise over a contiguous (M, N) matrix: y = silu(h (+ b[col])), computed in fp32."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < M * N
    h = tl.load(h_ptr + offs, mask=m, other=0.0).to(tl.float32)
    if HAS_BIAS:
        h += tl.load(b_ptr + offs % N, mask=m, other=0.0).to(tl.float32)
        h = h.to(y_ptr.dtype.element_ty).to(tl.float32)  # the reference rounds the linear output to fp16
    tl.store(y_ptr + offs, (h * tl.sigmoid(h)).to(y_ptr.dtype.element_ty), mask=m)


def bias_silu(h, b=None, block=1024, warps=4):
    h = h.contiguous()
    y = torch.empty_like(h)
    m, n = h.shape
    _bias_silu[(triton.cdiv(m * n, block),)](h, b if b is not None else h, y, m, n,
                                              HAS_BIAS=b is not None, BLOCK=block, num_warps=warps)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder layer: the executor copies the reference's weights in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        h = torch.matmul(x, self.fc.weight.t())
        return bias_silu(h, self.fc.bias, block=2048, warps=8)
