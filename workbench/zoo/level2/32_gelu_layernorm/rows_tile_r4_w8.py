"""Fused GELU + LayerNorm on 2-D tiles: each program holds 4 whole rows in registers (a quarter
as many programs, four times the registers each; block = next power of two >= N); centred
variance; 8 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_ln_rows(x_ptr, w_ptr, b_ptr, y_ptr, M, N, eps, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """ROWS rows per program: g = gelu_erf(x), y = (g - mean) * rstd * w + b per row."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows.to(tl.int64)[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    mean = tl.sum(g, axis=1) / N
    d = tl.where(mask, g - mean[:, None], 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, axis=1) / N + eps)
    w = tl.load(w_ptr + cols, mask=cols < N, other=0.0)
    b = tl.load(b_ptr + cols, mask=cols < N, other=0.0)
    tl.store(y_ptr + offs, d * rstd[:, None] * w[None, :] + b[None, :], mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name.
        self.ln = nn.LayerNorm(1)

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        _gelu_ln_rows[(triton.cdiv(m, 4),)](x, self.ln.weight, self.ln.bias, y, m, n, self.ln.eps,
                                            ROWS=4, BLOCK=triton.next_power_of_2(n), num_warps=8)
        return y
