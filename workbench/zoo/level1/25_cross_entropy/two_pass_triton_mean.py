"""Cross-entropy without online rescaling: per row, pass 1 finds the max logit, pass 2 sums
exp(x - max) (reading the row twice, 2048 at a time) and the loss is logsumexp - x[target];
a second single-program kernel averages the per-row losses, so no torch op does any math."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _ce_two_pass(x_ptr, t_ptr, loss_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * V
    mx = tl.full((BLOCK,), -float("inf"), tl.float32)
    for c0 in range(0, V, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mx = tl.maximum(mx, tl.load(x_ptr + base + cols, mask=cols < V, other=-float("inf")))
    row_max = tl.max(mx, axis=0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, V, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < V, other=-float("inf"))
        acc += tl.exp(x - row_max)
    lse = row_max + tl.log(tl.sum(acc, axis=0))
    tgt = tl.load(t_ptr + row)
    tl.store(loss_ptr + row, lse - tl.load(x_ptr + base + tgt))


@triton.jit
def _mean(loss_ptr, out_ptr, M, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for r0 in range(0, M, BLOCK):
        r = r0 + tl.arange(0, BLOCK)
        acc += tl.load(loss_ptr + r, mask=r < M, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / M)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        logits = logits.contiguous()
        target = target.contiguous()
        m, v = logits.shape
        losses = torch.empty((m,), device=logits.device, dtype=torch.float32)
        out = torch.empty((), device=logits.device, dtype=torch.float32)
        _ce_two_pass[(m,)](logits, target, losses, v, BLOCK=2048, num_warps=8)
        _mean[(1,)](losses, out, m, BLOCK=1024, num_warps=4)
        return out
