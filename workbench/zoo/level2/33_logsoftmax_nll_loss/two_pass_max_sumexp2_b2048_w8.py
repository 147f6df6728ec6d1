"""Two passes over each row in chunks of 2048 (8 warps): the row max, then the sum of exponentials
computed with exp2 on log2(e)-scaled logits (x is re-read from L2); loss = max + log(sum) minus the
target logit; a one-program kernel then averages the row losses in a fixed order (block 1024)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _nll_rows_two_pass(x_ptr, t_ptr, loss_ptr, C, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * C
    mvec = tl.full((BLOCK,), float("-inf"), tl.float32)
    for c0 in range(0, C, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mvec = tl.maximum(mvec, tl.load(x_ptr + base + cols, mask=cols < C, other=float("-inf")))
    mx = tl.max(mvec, axis=0)
    svec = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, C, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < C, other=float("-inf"))
        svec += tl.exp2((x - mx) * 1.4426950408889634)
    lse = mx + tl.log(tl.sum(svec, axis=0))
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
        _nll_rows_two_pass[(m,)](x, target, losses, c, BLOCK=2048, num_warps=8)
        out = torch.empty((), device=x.device, dtype=torch.float32)
        _mean[(1,)](losses, out, m, BLOCK=1024, num_warps=4)
        return out
