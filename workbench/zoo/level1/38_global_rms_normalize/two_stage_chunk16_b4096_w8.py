"""Two-launch global RMS normalisation: (1) each program sums the squares of CHUNK (16)
consecutive BLOCK-wide (4096) pieces of the flattened x into one partial; (2) the elementwise
pass, where every program re-sums all partials itself (fixed order, so deterministic), takes
1/sqrt(mean) and scales its BLOCK of x. Reads x twice and writes it once; 8 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sq_partials(x_ptr, part_ptr, n, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * (CHUNK * BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(CHUNK):
        offs = start + i * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        acc += x * x
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def _scale(x_ptr, part_ptr, y_ptr, n, n_part, inv_count, BLOCK_P: tl.constexpr, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK_P,), tl.float32)
    for p0 in range(0, n_part, BLOCK_P):
        p = p0 + tl.arange(0, BLOCK_P)
        acc += tl.load(part_ptr + p, mask=p < n_part, other=0.0)
    inv = 1.0 / tl.sqrt(tl.sum(acc, axis=0) * inv_count)
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
        block = 4096
        chunk = 16
        n_part = triton.cdiv(n, chunk * block)
        part = torch.empty((n_part,), device=x.device, dtype=torch.float32)
        _sq_partials[(n_part,)](x, part, n, CHUNK=chunk, BLOCK=block, num_warps=8)
        _scale[(triton.cdiv(n, block),)](x, part, y, n, n_part, 1.0 / n, BLOCK_P=512, BLOCK=block, num_warps=8)
        return y
