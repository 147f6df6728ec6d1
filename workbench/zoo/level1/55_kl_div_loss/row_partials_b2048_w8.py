"""Row-wise fused KL-divergence (batchmean): one program per row loops over the row in blocks of
2048 columns, accumulating p * log p - p * log_q (0 where p == 0) in fp32, and writes one partial
per row; a one-program kernel sums the B row partials in a fixed order and divides by B. 8 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _kl_rows(lq_ptr, p_ptr, part_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * N
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        m = cols < N
        lq = tl.load(lq_ptr + base + cols, mask=m, other=0.0)
        p = tl.load(p_ptr + base + cols, mask=m, other=0.0)
        acc += p * tl.log(tl.where(p > 0, p, 1.0)) - p * lq
    tl.store(part_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def _finish(part_ptr, out_ptr, P, denom, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for p0 in range(0, P, BLOCK):
        offs = p0 + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < P, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / denom)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_q, p):
        lq = log_q.contiguous()
        pp = p.contiguous()
        rows, n = lq.shape
        part = torch.empty((rows,), device=lq.device, dtype=torch.float32)
        out = torch.empty((), device=lq.device, dtype=torch.float32)
        _kl_rows[(rows,)](lq, pp, part, n, BLOCK=2048, num_warps=8)
        _finish[(1,)](part, out, rows, float(rows), BLOCK=1024, num_warps=4)
        return out
