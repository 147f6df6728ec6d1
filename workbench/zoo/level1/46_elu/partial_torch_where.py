"""ELU (alpha 1.0) split between Triton and torch: a Triton kernel (1024 elements per program,
4 warps) writes the negative branch t = alpha * (exp(min(x, 0)) - 1) for every element to an fp32
temporary, then torch.where(x > 0, x, t) selects (a second launch that rereads x and t).
About 2.5x the traffic of a fused kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _elu_neg_branch(x_ptr, t_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(t_ptr + offs, alpha * (tl.exp(tl.minimum(x, 0.0)) - 1.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        t = torch.empty(x.shape, device=x.device, dtype=torch.float32)
        _elu_neg_branch[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, t, n, 1.0, BLOCK=1024, num_warps=4)
        return torch.where(x > 0, x, t.to(x.dtype))
