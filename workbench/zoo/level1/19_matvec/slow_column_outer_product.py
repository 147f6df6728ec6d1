"""Deliberately slow: each program owns 128 rows and walks K one column at a time, loading
A[rows, k] (128 addresses K floats apart: uncoalesced) and accumulating a scaled column."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _mv_columns(a_ptr, b_ptr, y_ptr, M, K, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rmask = rows < M
    acc = tl.zeros((BLOCK_M,), tl.float32)
    for k in range(0, K):
        col = tl.load(a_ptr + rows.to(tl.int64) * K + k, mask=rmask, other=0.0)
        acc += col * tl.load(b_ptr + k)
    tl.store(y_ptr + rows, acc, mask=rmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        a = a.contiguous()
        b = b.contiguous()
        m, k = a.shape
        y = torch.empty((m,), device=a.device, dtype=a.dtype)
        _mv_columns[(triton.cdiv(m, 128),)](a, b, y, m, k, BLOCK_M=128, num_warps=4)
        return y
