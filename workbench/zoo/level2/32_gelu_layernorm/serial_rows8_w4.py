"""Fused GELU + LayerNorm where each program walks 8 consecutive rows serially (an eighth as many
programs), each row whole in registers (block = next power of two >= N); weight and bias are
loaded once per program; centred variance; 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_ln_serial_rows(x_ptr, w_ptr, b_ptr, y_ptr, M, N, eps, ROWS_PER_PROG: tl.constexpr,
                         BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    ok = cols < N
    w = tl.load(w_ptr + cols, mask=ok, other=0.0)
    b = tl.load(b_ptr + cols, mask=ok, other=0.0)
    first = tl.program_id(0) * ROWS_PER_PROG
    for i in range(0, ROWS_PER_PROG):
        row = first + i
        if row < M:
            base = row.to(tl.int64) * N
            x = tl.load(x_ptr + base + cols, mask=ok, other=0.0)
            g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
            mean = tl.sum(g, axis=0) / N
            d = tl.where(ok, g - mean, 0.0)
            rstd = tl.rsqrt(tl.sum(d * d, axis=0) / N + eps)
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
        rows_per_prog = 8
        _gelu_ln_serial_rows[(triton.cdiv(m, rows_per_prog),)](x, self.ln.weight, self.ln.bias, y, m, n, self.ln.eps,
                                                               ROWS_PER_PROG=rows_per_prog,
                                                               BLOCK=triton.next_power_of_2(n), num_warps=4)
        return y
