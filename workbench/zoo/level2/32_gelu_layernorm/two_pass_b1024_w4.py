"""Fused GELU + LayerNorm in two passes over chunks of 1024 per row: pass 1 accumulates sum and
sum of squares of gelu(x), pass 2 re-reads x (from L2), recomputes gelu and normalises; 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_ln_two_pass(x_ptr, w_ptr, b_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    """Row program_id(0); variance as E[g^2] - mean^2 (clamped at 0), all in fp32."""
    base = tl.program_id(0).to(tl.int64) * N
    s1 = tl.zeros((BLOCK,), tl.float32)
    s2 = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < N, other=0.0)
        g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
        s1 += g
        s2 += g * g
    mean = tl.sum(s1, axis=0) / N
    var = tl.maximum(tl.sum(s2, axis=0) / N - mean * mean, 0.0)
    rstd = tl.rsqrt(var + eps)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        ok = cols < N
        x = tl.load(x_ptr + base + cols, mask=ok, other=0.0)
        g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
        w = tl.load(w_ptr + cols, mask=ok, other=0.0)
        b = tl.load(b_ptr + cols, mask=ok, other=0.0)
        tl.store(y_ptr + base + cols, (g - mean) * rstd * w + b, mask=ok)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name.
        self.ln = nn.LayerNorm(1)

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        _gelu_ln_two_pass[(m,)](x, self.ln.weight, self.ln.bias, y, n, self.ln.eps, BLOCK=1024, num_warps=4)
        return y
