"""Deliberately slow: each single-warp program walks 64 rows one after another in 16-wide chunks with no software pipelining (1 stage): only M / 64 programs, latency-bound 64-byte loads."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _cos_seq(a_ptr, b_ptr, y_ptr, M, N, eps, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """ROWS rows per program, one after another, each reduced over BLOCK-wide chunks (a.b, a.a, b.b
    in fp32); y = a.b / (max(|a|, eps) * max(|b|, eps))."""
    for i in range(ROWS):
        row = tl.minimum(tl.program_id(0) * ROWS + i, M - 1)  # tail programs redo the last row
        base = row.to(tl.int64) * N
        sab = tl.zeros((BLOCK,), tl.float32)
        saa = tl.zeros((BLOCK,), tl.float32)
        sbb = tl.zeros((BLOCK,), tl.float32)
        for c0 in range(0, N, BLOCK):
            cols = c0 + tl.arange(0, BLOCK)
            m = cols < N
            a = tl.load(a_ptr + base + cols, mask=m, other=0.0)
            b = tl.load(b_ptr + base + cols, mask=m, other=0.0)
            sab += a * b
            saa += a * a
            sbb += b * b
        na = tl.maximum(tl.sqrt(tl.sum(saa, axis=0)), eps)
        nb = tl.maximum(tl.sqrt(tl.sum(sbb, axis=0)), eps)
        tl.store(y_ptr + row, tl.sum(sab, axis=0) / (na * nb))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        a = a.contiguous()
        b = b.contiguous()
        m, n = a.shape
        y = torch.empty((m,), device=a.device, dtype=a.dtype)
        _cos_seq[(triton.cdiv(m, 64),)](a, b, y, m, n, 1e-8, ROWS=64, BLOCK=16, num_warps=1, num_stages=1)
        return y
