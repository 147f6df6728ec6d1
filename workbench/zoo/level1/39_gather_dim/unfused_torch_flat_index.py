"""Unfused gather: the flat source index row * N + idx is built in PyTorch (an extra int64
tensor of M*K elements written and read back), then a 1-D Triton kernel copies
x.view(-1)[flat]. About twice the reference's index traffic."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _take(x_ptr, flat_ptr, y_ptr, total, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    src = tl.load(flat_ptr + offs, mask=m, other=0)
    tl.store(y_ptr + offs, tl.load(x_ptr + src, mask=m, other=0.0), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        x = x.contiguous()
        m, n = x.shape
        k = idx.shape[1]
        row_base = torch.arange(m, device=x.device, dtype=torch.int64).view(m, 1) * n
        flat = (idx + row_base).contiguous()
        y = torch.empty((m, k), device=x.device, dtype=x.dtype)
        total = m * k
        block = 1024
        _take[(triton.cdiv(total, block),)](x, flat, y, total, BLOCK=block, num_warps=4)
        return y
