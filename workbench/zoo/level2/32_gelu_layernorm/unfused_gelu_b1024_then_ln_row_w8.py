"""Unfused: a flat elementwise Triton kernel writes g = gelu(x) (block 1024, 4 warps), then a
LayerNorm row kernel reads g back with the whole row in registers (8 warps): one extra write and
read of the (M, N) fp32 intermediate."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_flat(x_ptr, g_ptr, total, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < total
    x = tl.load(x_ptr + offs, mask=ok, other=0.0)
    tl.store(g_ptr + offs, 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476)), mask=ok)


@triton.jit
def _layernorm_row(g_ptr, w_ptr, b_ptr, y_ptr, N, eps, BLOCK_N: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * N
    cols = tl.arange(0, BLOCK_N)
    ok = cols < N
    g = tl.load(g_ptr + base + cols, mask=ok, other=0.0)
    mean = tl.sum(g, axis=0) / N
    d = tl.where(ok, g - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=ok, other=0.0)
    b = tl.load(b_ptr + cols, mask=ok, other=0.0)
    tl.store(y_ptr + base + cols, d * rstd * w + b, mask=ok)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name.
        self.ln = nn.LayerNorm(1)

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        g = torch.empty_like(x)
        total = x.numel()
        _gelu_flat[(triton.cdiv(total, 1024),)](x, g, total, BLOCK=1024, num_warps=4)
        y = torch.empty_like(x)
        _layernorm_row[(m,)](g, self.ln.weight, self.ln.bias, y, n, self.ln.eps,
                             BLOCK_N=triton.next_power_of_2(n), num_warps=8)
        return y
