"""Deliberately slow global RMS normalisation: the whole sum of squares runs in ONE program with
one warp (a single SM streams all of x in BLOCK-wide steps); only the final scaling pass, which
takes 1/sqrt of that sum / numel, is spread over the GPU. Expect it many times slower than PyTorch."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sumsq_one_program(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for o in range(0, n, BLOCK):
        offs = o + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        acc += x * x
    tl.store(out_ptr, tl.sum(acc, axis=0))


@triton.jit
def _scale(x_ptr, ss_ptr, y_ptr, n, inv_count, BLOCK: tl.constexpr):
    inv = 1.0 / tl.sqrt(tl.load(ss_ptr) * inv_count)
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, x * inv, mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        y = torch.empty_like(x)
        ss = torch.empty((1,), device=x.device, dtype=torch.float32)
        _sumsq_one_program[(1,)](x, ss, n, BLOCK=512, num_warps=1)
        block = 1024
        _scale[(triton.cdiv(n, block),)](x, ss, y, n, 1.0 / n, BLOCK=block, num_warps=4)
        return y
