"""Embedding gather as a flat 1-D copy over all TOKENS*DIM outputs, 2048 per program: each lane
looks up its token id (idx[i // DIM]) and copies one weight element; ids are re-read per lane."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gather_flat(idx_ptr, w_ptr, y_ptr, total, DIM, BLOCK: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = o < total
    tok = tl.load(idx_ptr + o // DIM, mask=mask, other=0).to(tl.int64)
    v = tl.load(w_ptr + tok * DIM + o % DIM, mask=mask, other=0.0)
    tl.store(y_ptr + o, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder shape: the executor copies the reference's table in by name.
        self.emb = nn.Embedding(1, 1)

    def forward(self, idx):
        w = self.emb.weight.contiguous()
        dim = w.shape[1]
        flat = idx.contiguous().view(-1)
        y = torch.empty((flat.numel(), dim), device=w.device, dtype=w.dtype)
        total = y.numel()
        _gather_flat[(triton.cdiv(total, 2048),)](flat, w, y, total, dim, BLOCK=2048, num_warps=8)
        return y.view(*idx.shape, dim)
