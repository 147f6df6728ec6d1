"""Unfused MaxPool1d(4, stride 2, pad 1): a Triton kernel (2-D grid, 1024 per program, 4 warps)
writes the L_out+1 pair maxima q[k] = max(x[2k-1], x[2k]) of every (b, c) row (-inf outside the
row) to a workspace; torch then finishes with y[j] = max(q[j], q[j+1]), which covers the window
x[2j-1 .. 2j+2]. An extra write and read of a half-size workspace."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _pair_max(x_ptr, q_ptr, L, NQ, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    k = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    km = k < NQ
    odd = tl.load(x_ptr + row * L + 2 * k - 1, mask=km & (k > 0) & (2 * k - 1 < L),
                  other=-float("inf"))
    even = tl.load(x_ptr + row * L + 2 * k, mask=km & (2 * k < L), other=-float("inf"))
    tl.store(q_ptr + row * NQ + k, tl.maximum(odd, even), mask=km)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        b, c, l = x.shape
        l_out = (l + 2 * 1 - 4) // 2 + 1
        nq = l_out + 1
        q = torch.empty((b * c, nq), device=x.device, dtype=x.dtype)
        BLOCK = 1024
        _pair_max[(b * c, triton.cdiv(nq, BLOCK))](x, q, l, nq, BLOCK=BLOCK, num_warps=4)
        return torch.maximum(q[:, :-1], q[:, 1:]).view(b, c, l_out)
