"""Gather along dim 1 over the flattened output: each program handles BLOCK consecutive output
elements, recovers (row, col) with a division by K, and reads x[row, idx]. 1-D launch of
M*K/BLOCK programs; the integer division costs a little ALU work per element."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gather_flat(x_ptr, idx_ptr, y_ptr, total, N, K, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    row = offs // K
    idx = tl.load(idx_ptr + offs, mask=m, other=0)
    v = tl.load(x_ptr + row * N + idx, mask=m, other=0.0)
    tl.store(y_ptr + offs, v, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        x = x.contiguous()
        idx = idx.contiguous()
        m, n = x.shape
        k = idx.shape[1]
        y = torch.empty((m, k), device=x.device, dtype=x.dtype)
        total = m * k
        block = 1024
        _gather_flat[(triton.cdiv(total, block),)](x, idx, y, total, n, k, BLOCK=block, num_warps=4)
        return y
