"""Persistent kernel: a fixed grid of at most 264 programs (2 per H100 SM) strides over the
rows; each program loads scale and shift for a column chunk once per row visit, 1024-wide."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _scale_shift_persistent(x_ptr, s_ptr, t_ptr, y_ptr, M, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for row in range(pid, M, nprog):
        base = row * N  # M * N < 2**31 at the problem sizes
        for c0 in range(0, N, BLOCK):
            cols = c0 + tl.arange(0, BLOCK)
            m = cols < N
            x = tl.load(x_ptr + base + cols, mask=m, other=0.0)
            s = tl.load(s_ptr + cols, mask=m, other=0.0)
            t = tl.load(t_ptr + cols, mask=m, other=0.0)
            tl.store(y_ptr + base + cols, x * s + t, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.empty(1))
        self.shift = nn.Parameter(torch.empty(1))

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        grid = (min(m, 264),)
        _scale_shift_persistent[grid](x, self.scale, self.shift, y, m, n, BLOCK=1024, num_warps=4)
        return y
