"""Three passes over each row in chunks of 1024: the max, then the sum of exponentials, then
the output. Reads x three times (no online rescaling), one program per row, 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_three_pass(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * n_cols
    mx = tl.full((BLOCK,), -float("inf"), tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + offs, mask=offs < n_cols, other=-float("inf"))
        mx = tl.maximum(mx, x)
    row_max = tl.max(mx, axis=0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + offs, mask=offs < n_cols, other=-float("inf"))
        acc += tl.exp(x - row_max)
    inv = 1.0 / tl.sum(acc, axis=0)
    for c0 in range(0, n_cols, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + offs, mask=offs < n_cols, other=-float("inf"))
        tl.store(y_ptr + base + offs, tl.exp(x - row_max) * inv, mask=offs < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.contiguous().view(-1, x.shape[-1])
        rows, n = x2.shape
        y = torch.empty_like(x2)
        _softmax_three_pass[(rows,)](x2, y, n, BLOCK=1024, num_warps=4)
        return y.view(x.shape)
