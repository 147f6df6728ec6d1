"""Row argmin in one shot: one program per row (8 warps) loads the whole row (padded to the
next power of two, 4096 at the GPU size) and calls tl.argmin (ties to the left, i.e. the first
index). One read of x, no loop."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _argmin_row_whole(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row.to(tl.int64) * N + cols, mask=cols < N, other=float("inf"))
    idx = tl.argmin(x, axis=0, tie_break_left=True)
    tl.store(y_ptr + row, idx.to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), device=x.device, dtype=torch.int64)
        _argmin_row_whole[(m,)](x, y, n, BLOCK_N=triton.next_power_of_2(n), num_warps=8)
        return y
