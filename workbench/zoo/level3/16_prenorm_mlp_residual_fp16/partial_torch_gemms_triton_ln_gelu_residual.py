"""Both GEMMs (with their biases) left to PyTorch (cuBLAS fp16 F.linear); the rest in Triton: a
one-row-per-program LayerNorm with the whole row in registers (1024-wide block, 4 warps), a flat
exact erf GELU over the fc1 output (2048 per program, 8 warps) and a flat residual add (1024 per
program, 4 warps). The hidden activations make two extra round trips through memory."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


# Triton's CPU interpreter computes fp16/bf16 dots wrongly; only there are the operands upcast.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _layernorm_row(x_ptr, w_ptr, b_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    """One row per program held whole in registers (BLOCK >= N): centred two-moment statistics in fp32,
    fp16 output."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    xv = tl.load(x_ptr + row * N + cols, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(xv, axis=0) / N
    xc = tl.where(m, xv - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(xc * xc, axis=0) / N + eps)
    g = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
    bt = tl.load(b_ptr + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * N + cols, (xc * rstd * g + bt).to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def _gelu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """Flat elementwise exact GELU over n elements, fp32 math, 64-bit offsets."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))).to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def _add(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """Flat elementwise y = a + b (the residual), fp32 math, 64-bit offsets."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=m, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (a + b).to(y_ptr.dtype.element_ty), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters in by name.
        self.norm = nn.LayerNorm(1)
        self.fc1 = nn.Linear(1, 1)
        self.fc2 = nn.Linear(1, 1)

    def forward(self, x):
        x = x.contiguous()
        m, e = x.shape
        xn = torch.empty_like(x)
        # the row must fit one block: at least 1024 wide, more for wider rows
        block = max(1024, triton.next_power_of_2(e))
        _layernorm_row[(m,)](x, self.norm.weight, self.norm.bias, xn, e, self.norm.eps, BLOCK=block, num_warps=4)
        h = F.linear(xn, self.fc1.weight, self.fc1.bias)
        g = torch.empty_like(h)
        _gelu[(triton.cdiv(h.numel(), 2048),)](h, g, h.numel(), BLOCK=2048, num_warps=8)
        f = F.linear(g, self.fc2.weight, self.fc2.bias)
        y = torch.empty_like(x)
        _add[(triton.cdiv(y.numel(), 1024),)](x, f, y, y.numel(), BLOCK=1024, num_warps=4)
        return y
