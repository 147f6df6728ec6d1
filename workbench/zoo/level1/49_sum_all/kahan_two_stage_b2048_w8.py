"""Compensated (Kahan) two-stage sum: each stage-1 program (8 warps) loops over SPLIT=16
consecutive 2048-element blocks keeping a per-lane running sum and a per-lane compensation
term, and writes the compensated partial; stage 2 is one program (4 warps) that Kahan-sums the
partials in chunks of 256. Deterministic, and more accurate than a plain sum."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _kahan_partials(x_ptr, part_ptr, N, BLOCK: tl.constexpr, SPLIT: tl.constexpr):
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * (BLOCK * SPLIT)
    s = tl.zeros((BLOCK,), tl.float32)
    c = tl.zeros((BLOCK,), tl.float32)
    for k in range(SPLIT):
        offs = start + k * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
        yk = x - c
        t = s + yk
        c = (t - s) - yk
        s = t
    tl.store(part_ptr + pid, tl.sum(s - c, axis=0))


@triton.jit
def _kahan_finish(part_ptr, y_ptr, P, BLOCK_P: tl.constexpr):
    s = tl.zeros((BLOCK_P,), tl.float32)
    c = tl.zeros((BLOCK_P,), tl.float32)
    for p0 in range(0, P, BLOCK_P):
        offs = p0 + tl.arange(0, BLOCK_P)
        v = tl.load(part_ptr + offs, mask=offs < P, other=0.0)
        yk = v - c
        t = s + yk
        c = (t - s) - yk
        s = t
    tl.store(y_ptr, tl.sum(s - c, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous().view(-1)
        n = x.numel()
        BLOCK = 2048
        SPLIT = 16
        n_part = triton.cdiv(n, BLOCK * SPLIT)
        part = torch.empty((n_part,), device=x.device, dtype=torch.float32)
        y = torch.empty((), device=x.device, dtype=torch.float32)
        _kahan_partials[(n_part,)](x, part, n, BLOCK=BLOCK, SPLIT=SPLIT, num_warps=8)
        _kahan_finish[(1,)](part, y, n_part, BLOCK_P=256, num_warps=4)
        return y
