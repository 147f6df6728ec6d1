"""Per-row online log-sum-exp (a running max and rescaled sum per lane) in one pass over chunks
of 1024 (4 warps), minus the gathered target logit, gives each row's loss; a one-program kernel
then averages the row losses in a fixed order (block 1024) into the 0-dim result."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _nll_rows_online(x_ptr, t_ptr, loss_ptr, C, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * C
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, C, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < C, other=float("-inf"))
        m_new = tl.maximum(m, x)
        ref = tl.where(m_new == float("-inf"), 0.0, m_new)  # lanes that have seen no element yet
        s = s * tl.exp(m - ref) + tl.exp(x - ref)
        m = m_new
    mx = tl.max(m, axis=0)
    lse = mx + tl.log(tl.sum(s * tl.exp(m - mx), axis=0))
    tgt = tl.load(t_ptr + row)
    tl.store(loss_ptr + row, lse - tl.load(x_ptr + base + tgt))


@triton.jit
def _mean(v_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for i0 in range(0, n, BLOCK):
        offs = i0 + tl.arange(0, BLOCK)
        acc += tl.load(v_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, target):
        x = x.contiguous()
        m, c = x.shape
        losses = torch.empty(m, device=x.device, dtype=torch.float32)
        _nll_rows_online[(m,)](x, target, losses, c, BLOCK=1024, num_warps=4)
        out = torch.empty((), device=x.device, dtype=torch.float32)
        _mean[(1,)](losses, out, m, BLOCK=1024, num_warps=4)
        return out
