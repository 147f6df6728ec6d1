"""Row variance (unbiased), two-pass, one program per row: pass 1 walks the row in chunks of
1024 columns summing per lane to get the mean, pass 2 walks it again summing squared deviations
from that mean (the second read of a 32 KB row mostly hits L2); 4 warps. fp32 accumulation."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _var_two_pass(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * stride
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        acc += tl.load(base + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc2 = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(base + cols, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, x - mean, 0.0)
        acc2 += d * d
    tl.store(y_ptr + row, tl.sum(acc2, axis=0) / (N - 1))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), device=x.device, dtype=x.dtype)
        _var_two_pass[(m,)](x, y, n, x.stride(0), BLOCK=1024, num_warps=4)
        return y
