"""PARTIAL candidate: a Triton kernel computes each row's loss (per-lane online log-sum-exp over
chunks of 2048, 8 warps, minus the target logit); PyTorch then takes the mean of the M row losses."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _nll_rows(x_ptr, t_ptr, loss_ptr, C, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * C
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, C, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < C, other=float("-inf"))
        m_new = tl.maximum(m, x)
        ref = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - ref) + tl.exp(x - ref)
        m = m_new
    mx = tl.max(m, axis=0)
    lse = mx + tl.log(tl.sum(s * tl.exp(m - mx), axis=0))
    tl.store(loss_ptr + row, lse - tl.load(x_ptr + base + tl.load(t_ptr + row)))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, target):
        x = x.contiguous()
        m, c = x.shape
        losses = torch.empty(m, device=x.device, dtype=torch.float32)
        _nll_rows[(m,)](x, target, losses, c, BLOCK=2048, num_warps=8)
        return losses.mean()
