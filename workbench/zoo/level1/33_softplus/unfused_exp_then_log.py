"""Softplus (beta 1, threshold 20) unfused into two kernels: the first writes t = exp(min(x, 20))
to an fp32 temporary, the second reads x and t again and writes x where x > 20, else log(1 + t).
Five passes over memory instead of two (about 2.5x the traffic of a fused kernel)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _exp_clamped(x_ptr, t_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(t_ptr + offs, tl.exp(tl.minimum(x, 20.0)), mask=mask)


@triton.jit
def _log1p_select(x_ptr, t_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    t = tl.load(t_ptr + offs, mask=mask, other=0.0)
    y = tl.where(x > 20.0, x, tl.log(1.0 + t))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        t = torch.empty(x.shape, device=x.device, dtype=torch.float32)
        y = torch.empty_like(x)
        _exp_clamped[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, t, n, BLOCK=1024, num_warps=4)
        _log1p_select[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, t, y, n, BLOCK=1024, num_warps=4)
        return y
