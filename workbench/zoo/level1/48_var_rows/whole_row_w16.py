"""Row variance (unbiased), one program per row holding the whole row in registers: one masked
load of next_power_of_2(N) columns (8192 at the GPU size: 16 values per thread with 16 warps),
mean by tl.sum, then the squared deviations from the registers, no second read of memory.
Exact two-pass arithmetic at one-pass traffic; only suitable while a row fits in registers."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _var_whole_row(x_ptr, y_ptr, N, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mask, x - mean, 0.0)
    tl.store(y_ptr + row, tl.sum(d * d, axis=0) / (N - 1))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), device=x.device, dtype=x.dtype)
        block_n = triton.next_power_of_2(n)
        _var_whole_row[(m,)](x, y, n, x.stride(0), BLOCK_N=block_n, num_warps=16)
        return y
