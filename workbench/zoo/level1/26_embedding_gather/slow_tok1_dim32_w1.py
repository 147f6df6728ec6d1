"""Row gather: tiles of 1 tokens x 32 features."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _gather(table_ptr, idx_ptr, y_ptr, T, D, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    pt = tl.program_id(0)
    pd = tl.program_id(1)
    t = pt * BLOCK_T + tl.arange(0, BLOCK_T)
    d = pd * BLOCK_D + tl.arange(0, BLOCK_D)
    idx = tl.load(idx_ptr + t, mask=t < T, other=0)
    m = (t[:, None] < T) & (d[None, :] < D)
    v = tl.load(table_ptr + idx[:, None].to(tl.int64) * D + d[None, :], mask=m, other=0.0)
    tl.store(y_ptr + t[:, None].to(tl.int64) * D + d[None, :], v, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters in by name.
        self.emb = nn.Embedding(1, 1)

    def forward(self, idx):
        t = idx.numel()
        d = self.emb.weight.shape[1]
        y = torch.empty((t, d), device=idx.device, dtype=self.emb.weight.dtype)
        _gather[(triton.cdiv(t, 1), triton.cdiv(d, 32))](self.emb.weight, idx.contiguous(), y, t, d, BLOCK_T=1, BLOCK_D=32, num_warps=1)
        return y.view(*idx.shape, d)
