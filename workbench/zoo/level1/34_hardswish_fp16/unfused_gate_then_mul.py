"""Hardswish on fp16 unfused into two kernels: the first writes the gate clamp(x + 3, 0, 6) / 6
to an fp16 temporary, the second reads x and the gate again and writes their product. Four
passes over memory instead of two (about 2x the traffic of a fused kernel)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gate(x_ptr, g_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g = tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0) / 6.0
    tl.store(g_ptr + offs, g.to(g_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _mul(x_ptr, g_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x * g).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        g = torch.empty_like(x)
        y = torch.empty_like(x)
        _gate[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, g, n, BLOCK=2048, num_warps=4)
        _mul[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, g, y, n, BLOCK=2048, num_warps=4)
        return y
