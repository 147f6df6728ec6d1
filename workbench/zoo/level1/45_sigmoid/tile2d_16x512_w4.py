"""Sigmoid over a 2-D grid of (16, 512) tiles: rows and columns indexed separately with the row
stride (64-bit row offsets), 4 warps. Overflow-free form: e = exp(-|x|), y = 1 / (1 + e) for
x >= 0 and e / (1 + e) otherwise. Same traffic as the flat kernels, more index arithmetic."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sigmoid_tile(x_ptr, y_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * stride + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    e = tl.exp(-tl.abs(x))
    r = 1.0 / (1.0 + e)
    y = tl.where(x >= 0.0, r, e * r)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.contiguous().view(-1, x.shape[-1])
        m, n = x2.shape
        y = torch.empty_like(x2)
        grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]), triton.cdiv(n, meta["BLOCK_N"]))
        _sigmoid_tile[grid](x2, y, m, n, x2.stride(0), BLOCK_M=16, BLOCK_N=512, num_warps=4)
        return y.view(x.shape)
