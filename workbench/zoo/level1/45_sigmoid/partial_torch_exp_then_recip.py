"""Sigmoid split between Triton and torch: a Triton kernel (1024 elements per program, 4 warps)
writes e = exp(-x) to an fp32 temporary, then torch finishes with y = 1 / (1 + e) (an add and an
in-place reciprocal, two more elementwise launches). About 3x the traffic of a fused kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _exp_neg(x_ptr, e_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(e_ptr + offs, tl.exp(-x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        e = torch.empty(x.shape, device=x.device, dtype=torch.float32)
        _exp_neg[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, e, n, BLOCK=1024, num_warps=4)
        return torch.add(e, 1.0).reciprocal_().to(x.dtype)
