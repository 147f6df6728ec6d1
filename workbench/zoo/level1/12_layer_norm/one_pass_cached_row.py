"""Cached-row LayerNorm: the whole row (padded to a power of two) is loaded into registers
once, mean and variance are computed from the registers, and the output is written from them:
one read and one write of x (no re-reads), at the cost of many registers per program."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _ln_cached(x_ptr, w_ptr, b_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    base = row.to(tl.int64) * N
    x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + base + cols, d * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder shape: the executor copies the reference's weight and bias in by name.
        self.ln = nn.LayerNorm(1)

    def forward(self, x):
        x2 = x.contiguous().view(-1, x.shape[-1])
        rows, n = x2.shape
        y = torch.empty_like(x2)
        _ln_cached[(rows,)](x2, self.ln.weight, self.ln.bias, y, n, self.ln.eps,
                            BLOCK=triton.next_power_of_2(n), num_warps=16)
        return y.view(x.shape)
