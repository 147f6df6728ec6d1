"""Fused GELU + LayerNorm in three passes over chunks of 512 per row: mean of gelu(x), then the
centred variance sum((g - mean)^2), then the normalised output; gelu is recomputed each pass
(x is re-read from L2); 4 warps. Most accurate chunked variant, most arithmetic."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu(x):
    return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))


@triton.jit
def _gelu_ln_three_pass(x_ptr, w_ptr, b_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * N
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        acc += _gelu(tl.load(x_ptr + base + cols, mask=cols < N, other=0.0))
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        ok = cols < N
        d = tl.where(ok, _gelu(tl.load(x_ptr + base + cols, mask=ok, other=0.0)) - mean, 0.0)
        acc += d * d
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / N + eps)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        ok = cols < N
        g = _gelu(tl.load(x_ptr + base + cols, mask=ok, other=0.0))
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
        _gelu_ln_three_pass[(m,)](x, self.ln.weight, self.ln.bias, y, n, self.ln.eps, BLOCK=512, num_warps=4)
        return y
