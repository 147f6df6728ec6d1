"""PARTIAL candidate: the GEMM (and bias add) runs in PyTorch/cuBLAS; only the LayerNorm is a Triton kernel (two passes over 1024-wide chunks)."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _norm(x_ptr, r_ptr, w_ptr, b_ptr, y_ptr, N, eps, MODE: tl.constexpr, HAS_RES: tl.constexpr,
          HAS_W: tl.constexpr, HAS_B: tl.constexpr, ROUND_BF16: tl.constexpr, BLOCK: tl.constexpr):
    """MODE 0: LayerNorm, 1: RMSNorm, 2: L2 normalisation. Two passes over the row in chunks."""
    row = tl.program_id(0)
    base = row.to(tl.int64) * N
    s1 = tl.zeros((BLOCK,), tl.float32)
    s2 = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        m = offs < N
        x = tl.load(x_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
        if HAS_RES:
            x += tl.load(r_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
            if ROUND_BF16:
                x = x.to(tl.bfloat16).to(tl.float32)
        s1 += x
        s2 += x * x
    mean = tl.sum(s1, axis=0) / N
    if MODE == 0:
        var = tl.sum(s2, axis=0) / N - mean * mean
        scale = tl.rsqrt(tl.maximum(var, 0.0) + eps)
    elif MODE == 1:
        scale = tl.rsqrt(tl.sum(s2, axis=0) / N + eps)
    else:
        scale = 1.0 / tl.maximum(tl.sqrt(tl.sum(s2, axis=0)), eps)
    for c0 in range(0, N, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        m = offs < N
        x = tl.load(x_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
        if HAS_RES:
            x += tl.load(r_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
            if ROUND_BF16:
                x = x.to(tl.bfloat16).to(tl.float32)
        if MODE == 0:
            y = (x - mean) * scale
        else:
            y = x * scale
        if ROUND_BF16:
            y = y.to(tl.bfloat16).to(tl.float32)
        if HAS_W:
            y = y * tl.load(w_ptr + offs, mask=m, other=0.0).to(tl.float32)
        if HAS_B:
            y = y + tl.load(b_ptr + offs, mask=m, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + offs, y.to(y_ptr.dtype.element_ty), mask=m)


def norm(x, res=None, w=None, b=None, mode=0, eps=1e-5, round_bf16=False, block=1024, warps=4):
    x2 = x.contiguous().view(-1, x.shape[-1])
    r2 = None if res is None else res.contiguous().view(-1, x.shape[-1])
    y = torch.empty_like(x2)
    _norm[(x2.shape[0],)](x2, r2 if r2 is not None else x2, w if w is not None else x2, b if b is not None else x2, y,
                          x2.shape[1], eps, MODE=mode, HAS_RES=r2 is not None, HAS_W=w is not None, HAS_B=b is not None,
                          ROUND_BF16=round_bf16, BLOCK=block, num_warps=warps)
    return y.view(x.shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters and buffers in by name.
        self.ln = nn.LayerNorm(1)
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        h = norm(x, w=self.ln.weight, b=self.ln.bias, mode=0, eps=1e-5, block=1024, warps=4)
        return torch.matmul(h, self.fc.weight.t()) + self.fc.bias
