"""Fused one-pass cosine similarity: one program per row loops over 1024-wide column chunks accumulating a.b, |a|^2 and |b|^2 together (one read of a and b); 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _cos_rows(a_ptr, b_ptr, y_ptr, M, N, eps, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """ROWS rows per program, one pass over BLOCK-wide column chunks accumulating a.b, a.a, b.b
    in fp32; y = a.b / (max(|a|, eps) * max(|b|, eps)) (each norm clamped separately, as torch)."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    base = rows[:, None].to(tl.int64) * N
    sab = tl.zeros((ROWS, BLOCK), tl.float32)
    saa = tl.zeros((ROWS, BLOCK), tl.float32)
    sbb = tl.zeros((ROWS, BLOCK), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        a = tl.load(a_ptr + base + cols[None, :], mask=mask, other=0.0)
        b = tl.load(b_ptr + base + cols[None, :], mask=mask, other=0.0)
        sab += a * b
        saa += a * a
        sbb += b * b
    na = tl.maximum(tl.sqrt(tl.sum(saa, axis=1)), eps)
    nb = tl.maximum(tl.sqrt(tl.sum(sbb, axis=1)), eps)
    tl.store(y_ptr + rows, tl.sum(sab, axis=1) / (na * nb), mask=rows < M)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        a = a.contiguous()
        b = b.contiguous()
        m, n = a.shape
        y = torch.empty((m,), device=a.device, dtype=a.dtype)
        _cos_rows[(triton.cdiv(m, 1),)](a, b, y, m, n, 1e-8, ROWS=1, BLOCK=1024, num_warps=4)
        return y
