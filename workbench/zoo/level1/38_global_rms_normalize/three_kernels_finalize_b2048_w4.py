"""Three-launch global RMS normalisation: (1) one partial sum of squares per BLOCK-wide piece of
the flattened x (many small programs); (2) a single program reduces the partials and writes
1/rms(x); (3) an elementwise pass scales x by that scalar. Reads x twice, writes once."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sq_partials(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(part_ptr + pid, tl.sum(x * x, axis=0))


@triton.jit
def _finalize(part_ptr, inv_ptr, n_part, inv_count, BLOCK_P: tl.constexpr):
    acc = tl.zeros((BLOCK_P,), tl.float32)
    for p0 in range(0, n_part, BLOCK_P):
        p = p0 + tl.arange(0, BLOCK_P)
        acc += tl.load(part_ptr + p, mask=p < n_part, other=0.0)
    tl.store(inv_ptr, 1.0 / tl.sqrt(tl.sum(acc, axis=0) * inv_count))


@triton.jit
def _scale(x_ptr, inv_ptr, y_ptr, n, BLOCK: tl.constexpr):
    inv = tl.load(inv_ptr)
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
        block = 2048
        n_part = triton.cdiv(n, block)
        part = torch.empty((n_part,), device=x.device, dtype=torch.float32)
        inv = torch.empty((1,), device=x.device, dtype=torch.float32)
        _sq_partials[(n_part,)](x, part, n, BLOCK=block, num_warps=4)
        _finalize[(1,)](part, inv, n_part, 1.0 / n, BLOCK_P=1024, num_warps=8)
        _scale[(triton.cdiv(n, block),)](x, inv, y, n, BLOCK=block, num_warps=4)
        return y
