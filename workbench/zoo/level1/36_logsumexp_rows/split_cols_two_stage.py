"""Row log-sum-exp as a split reduction: stage 1 gives each (row, column slice) pair its own
program (SPLIT = 4 slices per row), which reduces its slice online and writes a partial
(max, sum of exp) pair to a workspace; stage 2 merges the SPLIT partials of each row in a fixed
order. Four times the programs of a row-per-program kernel, a tiny extra round trip."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _lse_partial(x_ptr, pm_ptr, ps_ptr, N, cols_per_split, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    sp = tl.program_id(1)
    c_start = sp * cols_per_split
    c_end = tl.minimum(c_start + cols_per_split, N)
    base = x_ptr + row.to(tl.int64) * N
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(c_start, c_end, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        x = tl.load(base + offs, mask=offs < c_end, other=-float("inf"))
        m_new = tl.maximum(m, x)
        safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        s = s * tl.exp(m - safe) + tl.exp(x - safe)
        m = m_new
    mx = tl.max(m, axis=0)
    safe_mx = tl.where(mx == -float("inf"), 0.0, mx)
    tl.store(pm_ptr + row * SPLIT + sp, mx)
    tl.store(ps_ptr + row * SPLIT + sp, tl.sum(s * tl.exp(m - safe_mx), axis=0))


@triton.jit
def _lse_merge(pm_ptr, ps_ptr, y_ptr, M, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rmask = rows < M
    mx = tl.full((BLOCK,), -float("inf"), tl.float32)
    for sp in range(0, SPLIT):
        mx = tl.maximum(mx, tl.load(pm_ptr + rows * SPLIT + sp, mask=rmask, other=0.0))
    tot = tl.zeros((BLOCK,), tl.float32)
    for sp in range(0, SPLIT):
        pm = tl.load(pm_ptr + rows * SPLIT + sp, mask=rmask, other=0.0)
        tot += tl.load(ps_ptr + rows * SPLIT + sp, mask=rmask, other=1.0) * tl.exp(pm - mx)
    tl.store(y_ptr + rows, mx + tl.log(tot), mask=rmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.contiguous().view(-1, x.shape[-1])
        rows, n = x2.shape
        split = 4
        cols_per_split = triton.cdiv(n, split)
        pm = torch.empty((rows, split), device=x.device, dtype=torch.float32)
        ps = torch.empty((rows, split), device=x.device, dtype=torch.float32)
        y = torch.empty((rows,), device=x.device, dtype=x.dtype)
        _lse_partial[(rows, split)](x2, pm, ps, n, cols_per_split, SPLIT=split, BLOCK=1024, num_warps=4)
        _lse_merge[lambda meta: (triton.cdiv(rows, meta["BLOCK"]),)](pm, ps, y, rows, SPLIT=split,
                                                                   BLOCK=256, num_warps=4)
        return y.view(x.shape[:-1])
