"""Row minimum, one program per row holding the whole row in registers: a single masked load of
next_power_of_2(N) columns (4096 at the GPU size: 16 values per thread) and one tl.min, no loop;
8 warps. Only suitable while a row fits in registers."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_min_whole(x_ptr, y_ptr, N, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=float("inf"))
    tl.store(y_ptr + row, tl.min(x, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), device=x.device, dtype=x.dtype)
        block_n = triton.next_power_of_2(n)
        _row_min_whole[(m,)](x, y, n, x.stride(0), BLOCK_N=block_n, num_warps=8)
        return y
