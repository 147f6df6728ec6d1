"""ELU (alpha 1.0), persistent: a fixed grid of 8 programs per SM (never more than there are
blocks), each striding over the tensor in blocks of 1024 elements, 4 warps.
y = x where x > 0, else alpha * (exp(min(x, 0)) - 1)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _elu_loop(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    step = tl.num_programs(0) * BLOCK
    for base in range(tl.program_id(0) * BLOCK, n, step):
        offs = base + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.where(x > 0.0, x, alpha * (tl.exp(tl.minimum(x, 0.0)) - 1.0))
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 2
        grid = lambda meta: (max(1, min(8 * sms, triton.cdiv(n, meta["BLOCK"]))),)
        _elu_loop[grid](x, y, n, 1.0, BLOCK=1024, num_warps=4)
        return y
