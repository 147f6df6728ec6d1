"""Implicit-GEMM 1-D convolution (ieee tl.dot, exact fp32), bias fused; tiles 128 output channels x 64 positions, BLOCK_K 16, 8 warps, 3 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv1d_igemm(x_ptr, w_ptr, b_ptr, y_ptr, CI, CO, L, KS: tl.constexpr, PAD: tl.constexpr,
                  HAS_BIAS: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_K: tl.constexpr):
    """Implicit GEMM: rows are output channels, columns output positions of one sequence, the
    reduction runs over k = (ci, tap) with the input gathered on the fly (zero padding by mask)."""
    pc = tl.program_id(0)
    pl = tl.program_id(1)
    n = tl.program_id(2)
    co = pc * BLOCK_CO + tl.arange(0, BLOCK_CO)
    lo = pl * BLOCK_L + tl.arange(0, BLOCK_L)
    KTOT = CI * KS
    x_base = x_ptr + n.to(tl.int64) * CI * L
    acc = tl.zeros((BLOCK_CO, BLOCK_L), dtype=tl.float32)
    for k0 in range(0, KTOT, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        ci = k // KS
        tap = k % KS
        wt = tl.load(w_ptr + co[:, None] * KTOT + k[None, :], mask=(co[:, None] < CO) & (k[None, :] < KTOT), other=0.0)
        li = lo[None, :] + tap[:, None] - PAD
        ok = (k[:, None] < KTOT) & (li >= 0) & (li < L)
        xt = tl.load(x_base + ci[:, None] * L + li, mask=ok, other=0.0)
        acc += tl.dot(wt, xt, input_precision="ieee")
    if HAS_BIAS:
        acc += tl.load(b_ptr + co, mask=co < CO, other=0.0)[:, None]
    omask = (co[:, None] < CO) & (lo[None, :] < L)
    tl.store(y_ptr + n.to(tl.int64) * CO * L + co[:, None] * L + lo[None, :], acc, mask=omask)


def conv1d(x, weight, bias=None, pad=2, bco=64, bl=128, bk=32, warps=4, stages=2):
    x = x.contiguous()
    nb, ci, length = x.shape
    co, _, ks = weight.shape
    y = torch.empty((nb, co, length + 2 * pad - ks + 1), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(co, bco), triton.cdiv(length, bl), nb)
    _conv1d_igemm[grid](x, weight.contiguous(), bias if bias is not None else x, y, ci, co, length,
                        KS=ks, PAD=pad, HAS_BIAS=bias is not None, BLOCK_CO=bco, BLOCK_L=bl, BLOCK_K=bk,
                        num_warps=warps, num_stages=stages)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's conv weight and bias in by name.
        self.conv = nn.Conv1d(1, 1, 5, padding=2, bias=True)

    def forward(self, x):
        return conv1d(x, self.conv.weight, self.conv.bias, pad=2, bco=128, bl=64, bk=16, warps=8, stages=3)
