"""Fused GELU + LayerNorm where each 1-warp program walks 16 consecutive rows serially, each row in
two passes over tiny chunks of 32 (sum and sum of squares of gelu(x), then normalise).
Deliberately few programs, tiny blocks and a single warp: slow."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_ln_slow(x_ptr, w_ptr, b_ptr, y_ptr, M, N, eps, ROWS_PER_PROG: tl.constexpr, BLOCK: tl.constexpr):
    first = tl.program_id(0) * ROWS_PER_PROG
    for i in range(0, ROWS_PER_PROG):
        row = first + i
        if row < M:
            base = row.to(tl.int64) * N
            s1 = tl.zeros((BLOCK,), tl.float32)
            s2 = tl.zeros((BLOCK,), tl.float32)
            for c0 in range(0, N, BLOCK):
                cols = c0 + tl.arange(0, BLOCK)
                x = tl.load(x_ptr + base + cols, mask=cols < N, other=0.0)
                g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
                s1 += g
                s2 += g * g
            mean = tl.sum(s1, axis=0) / N
            rstd = tl.rsqrt(tl.maximum(tl.sum(s2, axis=0) / N - mean * mean, 0.0) + eps)
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
        rows_per_prog = 16
        _gelu_ln_slow[(triton.cdiv(m, rows_per_prog),)](x, self.ln.weight, self.ln.bias, y, m, n, self.ln.eps,
                                                        ROWS_PER_PROG=rows_per_prog, BLOCK=32, num_warps=1)
        return y
