"""Row minimum, one program per row looping over the columns in chunks of 4096 with a per-lane
running minimum (one tl.min across lanes at the end), 8 warps (a 4096-wide row is a single chunk). 64-bit row base."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_min(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * stride
    acc = tl.full((BLOCK,), float("inf"), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < N, other=float("inf"))
        acc = tl.minimum(acc, x)
    tl.store(y_ptr + row, tl.min(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), device=x.device, dtype=x.dtype)
        _row_min[(m,)](x, y, n, x.stride(0), BLOCK=4096, num_warps=8)
        return y
