"""One pass with atomics: each program (4 warps) sums a 2048-element block and adds its partial
into a zero-initialised 0-d fp32 result with tl.atomic_add. No second kernel, but the order
of the additions (and so the last bits of the sum) varies from run to run on a GPU."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _block_sum_atomic(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.atomic_add(y_ptr, tl.sum(x.to(tl.float32), axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous().view(-1)
        n = x.numel()
        BLOCK = 2048
        y = torch.zeros((), device=x.device, dtype=torch.float32)
        _block_sum_atomic[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=4)
        return y
