"""Row log-sum-exp in two passes over each row (no online rescaling): the first pass finds the
row max, the second sums exp(x - max); chunks of 2048, one program per row, 8 warps. Reads x
twice (the second read of a 32 KB row mostly hits L2); one exp per element instead of two."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _lse_two_pass(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row.to(tl.int64) * N
    mx = tl.full((BLOCK,), -float("inf"), tl.float32)
    for c0 in range(0, N, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        mx = tl.maximum(mx, tl.load(base + offs, mask=offs < N, other=-float("inf")))
    row_max = tl.max(mx, axis=0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        x = tl.load(base + offs, mask=offs < N, other=-float("inf"))
        acc += tl.exp(x - row_max)
    tl.store(y_ptr + row, row_max + tl.log(tl.sum(acc, axis=0)))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.contiguous().view(-1, x.shape[-1])
        rows, n = x2.shape
        y = torch.empty((rows,), device=x.device, dtype=x.dtype)
        _lse_two_pass[(rows,)](x2, y, n, BLOCK=2048, num_warps=8)
        return y.view(x.shape[:-1])
