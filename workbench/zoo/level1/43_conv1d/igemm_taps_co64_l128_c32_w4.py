"""Tap-major implicit-GEMM 1-D convolution (ieee tl.dot, exact fp32), bias fused: for each of
the 5 taps (unrolled) the program multiplies a (64 out-channels x 32 in-channels) weight slice
by the input rows shifted by that tap (32 in-channels x 128 positions, contiguous loads);
4 warps, 2 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv1d_taps(x_ptr, w_ptr, b_ptr, y_ptr, CI, CO, L, KS: tl.constexpr, PAD: tl.constexpr,
                 BLOCK_CO: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_C: tl.constexpr):
    pc = tl.program_id(0)
    pl = tl.program_id(1)
    n = tl.program_id(2)
    co = pc * BLOCK_CO + tl.arange(0, BLOCK_CO)
    lo = pl * BLOCK_L + tl.arange(0, BLOCK_L)
    x_base = x_ptr + n.to(tl.int64) * CI * L
    acc = tl.zeros((BLOCK_CO, BLOCK_L), dtype=tl.float32)
    for t in tl.static_range(KS):
        li = lo + t - PAD
        lok = (li >= 0) & (li < L)
        for c0 in range(0, CI, BLOCK_C):
            c = c0 + tl.arange(0, BLOCK_C)
            wt = tl.load(w_ptr + co[:, None] * (CI * KS) + c[None, :] * KS + t,
                         mask=(co[:, None] < CO) & (c[None, :] < CI), other=0.0)
            xt = tl.load(x_base + c[:, None] * L + li[None, :], mask=(c[:, None] < CI) & lok[None, :], other=0.0)
            acc += tl.dot(wt, xt, input_precision="ieee")
    acc += tl.load(b_ptr + co, mask=co < CO, other=0.0)[:, None]
    omask = (co[:, None] < CO) & (lo[None, :] < L)
    tl.store(y_ptr + n.to(tl.int64) * CO * L + co[:, None] * L + lo[None, :], acc, mask=omask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's conv weight and bias in by name.
        self.conv = nn.Conv1d(1, 1, 5, padding=2, bias=True)

    def forward(self, x):
        x = x.contiguous()
        w = self.conv.weight.contiguous()
        nb, ci, length = x.shape
        co, _, ks = w.shape
        pad = 2
        bco = 64
        bl = 128
        y = torch.empty((nb, co, length + 2 * pad - ks + 1), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(co, bco), triton.cdiv(length, bl), nb)
        _conv1d_taps[grid](x, w, self.conv.bias, y, ci, co, length, KS=ks, PAD=pad,
                           BLOCK_CO=bco, BLOCK_L=bl, BLOCK_C=32, num_warps=4, num_stages=2)
        return y
