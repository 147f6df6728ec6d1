"""Cached-row L2 normalisation: the whole row sits in registers (padded to a power of two), so
x is read once and y written once; y = x / max(||x||, 1e-12). 8 warps per row."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _l2n_cached(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    base = row.to(tl.int64) * N
    x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
    norm = tl.maximum(tl.sqrt(tl.sum(x * x, axis=0)), 1e-12)
    tl.store(y_ptr + base + cols, x / norm, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.contiguous().view(-1, x.shape[-1])
        rows, n = x2.shape
        y = torch.empty_like(x2)
        _l2n_cached[(rows,)](x2, y, n, BLOCK=triton.next_power_of_2(n), num_warps=8)
        return y.view(x.shape)
