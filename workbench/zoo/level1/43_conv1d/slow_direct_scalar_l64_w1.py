"""Direct 1-D convolution with scalar weight loads: one program per (sequence, output channel)
and 64 positions, a C_in x 5 loop of vector FMAs, bias fused, 1 warp. No tensor cores and no
reuse of the input across output channels: deliberately slow."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv1d_scalar(x_ptr, w_ptr, b_ptr, y_ptr, CI, CO, L, KS: tl.constexpr, PAD: tl.constexpr,
                   BLOCK_L: tl.constexpr):
    pl = tl.program_id(0)
    nc = tl.program_id(1)
    n = nc // CO
    co = nc % CO
    lo = pl * BLOCK_L + tl.arange(0, BLOCK_L)
    x_base = x_ptr + n.to(tl.int64) * CI * L
    acc = tl.zeros((BLOCK_L,), dtype=tl.float32)
    for ci in range(0, CI):
        for t in tl.static_range(KS):
            li = lo + t - PAD
            xv = tl.load(x_base + ci * L + li, mask=(li >= 0) & (li < L), other=0.0)
            acc += xv * tl.load(w_ptr + (co * CI + ci) * KS + t)
    acc += tl.load(b_ptr + co)
    tl.store(y_ptr + nc.to(tl.int64) * L + lo, acc, mask=lo < L)


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
        bl = 64
        y = torch.empty((nb, co, length + 4 - ks + 1), device=x.device, dtype=x.dtype)
        _conv1d_scalar[(triton.cdiv(length, bl), nb * co)](x, w, self.conv.bias, y, ci, co, length,
                                                         KS=ks, PAD=2, BLOCK_L=bl, num_warps=1)
        return y
