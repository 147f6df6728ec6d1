"""Row variance (unbiased), one pass with per-lane Welford updates: one program per row walks
the row in chunks of 2048 columns, 8 warps; each lane keeps (count, mean, M2) and updates them
per element (a divide per element), then the lanes are merged exactly in closed form:
mean = sum(c_i * mean_i) / n, M2 = sum(M2_i + c_i * (mean_i - mean)^2). Reads x once."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _var_welford(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * stride
    cnt = tl.zeros((BLOCK,), tl.float32)
    mean = tl.zeros((BLOCK,), tl.float32)
    m2 = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(base + cols, mask=mask, other=0.0).to(tl.float32)
        cnt_new = cnt + tl.where(mask, 1.0, 0.0)
        delta = tl.where(mask, x - mean, 0.0)
        mean = mean + delta / tl.maximum(cnt_new, 1.0)
        m2 = m2 + delta * tl.where(mask, x - mean, 0.0)
        cnt = cnt_new
    total = tl.sum(cnt, axis=0)
    row_mean = tl.sum(cnt * mean, axis=0) / total
    dm = mean - row_mean
    row_m2 = tl.sum(m2 + cnt * dm * dm, axis=0)
    tl.store(y_ptr + row, row_m2 / (total - 1.0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), device=x.device, dtype=x.dtype)
        _var_welford[(m,)](x, y, n, x.stride(0), BLOCK=2048, num_warps=8)
        return y
