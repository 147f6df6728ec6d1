"""Fused masked fill + online softmax over column chunks: pass 1 keeps a running max and rescaled
sum per lane over kept entries, pass 2 re-reads scores and mask and writes the normalised row
(two reads, one write; works for any row length). Chunks of 256, 2 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _masked_softmax_loop(x_ptr, m_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    m_row = m_ptr + row * n_cols
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        inb = offs < n_cols
        keep = (tl.load(m_row + offs, mask=inb, other=0) != 0) & inb
        x = tl.load(x_row + offs, mask=inb, other=0.0)
        x = tl.where(keep, x, -float("inf"))
        m_new = tl.maximum(m, x)
        s = s * tl.exp(tl.where(m_new == -float("inf"), 0.0, m - m_new)) + tl.where(keep, tl.exp(x - m_new), 0.0)
        m = m_new
    mx = tl.max(m, axis=0)
    tot = tl.sum(s * tl.exp(tl.where(m == -float("inf"), -float("inf"), m - mx)), axis=0)
    for c0 in range(0, n_cols, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        inb = offs < n_cols
        keep = tl.load(m_row + offs, mask=inb, other=0) != 0
        x = tl.load(x_row + offs, mask=inb, other=0.0)
        y = tl.where(keep, tl.exp(x - mx) / tot, 0.0)
        tl.store(y_ptr + row * n_cols + offs, y, mask=inb)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores, mask):
        x = scores.contiguous()
        m = mask.contiguous().view(torch.uint8)
        n = x.shape[-1]
        rows = x.numel() // n
        y = torch.empty_like(x)
        _masked_softmax_loop[(rows,)](x, m, y, n, BLOCK=256, num_warps=2)
        return y
