"""Fused GELU + LayerNorm, one program per row with the whole row in registers (block =
next power of two >= N, 2048 at the GPU size): one read of x, centred variance, one write; 8 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_ln_row(x_ptr, w_ptr, b_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    """Row program_id(0): g = gelu_erf(x), y = (g - mean) * rstd * w + b (fp32 throughout)."""
    base = tl.program_id(0).to(tl.int64) * N
    cols = tl.arange(0, BLOCK)
    ok = cols < N
    x = tl.load(x_ptr + base + cols, mask=ok, other=0.0)
    g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
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
        y = torch.empty_like(x)
        _gelu_ln_row[(m,)](x, self.ln.weight, self.ln.bias, y, n, self.ln.eps,
                           BLOCK=triton.next_power_of_2(n), num_warps=8)
        return y
