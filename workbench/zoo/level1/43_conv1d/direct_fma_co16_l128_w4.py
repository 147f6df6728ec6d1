"""Direct 1-D convolution on CUDA cores (no tl.dot): each program owns 16 output channels x
128 positions of one sequence and accumulates outer products of a weight column and a shifted
input row over C_in and the 5 taps, bias fused. Exact fp32, no tensor cores; 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv1d_direct(x_ptr, w_ptr, b_ptr, y_ptr, CI, CO, L, KS: tl.constexpr, PAD: tl.constexpr,
                   BLOCK_CO: tl.constexpr, BLOCK_L: tl.constexpr):
    pc = tl.program_id(0)
    pl = tl.program_id(1)
    n = tl.program_id(2)
    co = pc * BLOCK_CO + tl.arange(0, BLOCK_CO)
    lo = pl * BLOCK_L + tl.arange(0, BLOCK_L)
    comask = co < CO
    x_base = x_ptr + n.to(tl.int64) * CI * L
    acc = tl.zeros((BLOCK_CO, BLOCK_L), dtype=tl.float32)
    for ci in range(0, CI):
        for t in tl.static_range(KS):
            li = lo + t - PAD
            xv = tl.load(x_base + ci * L + li, mask=(li >= 0) & (li < L), other=0.0)
            wv = tl.load(w_ptr + co * (CI * KS) + ci * KS + t, mask=comask, other=0.0)
            acc += wv[:, None] * xv[None, :]
    acc += tl.load(b_ptr + co, mask=comask, other=0.0)[:, None]
    omask = comask[:, None] & (lo[None, :] < L)
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
        bco = 16
        bl = 128
        y = torch.empty((nb, co, length + 2 * pad - ks + 1), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(co, bco), triton.cdiv(length, bl), nb)
        _conv1d_direct[grid](x, w, self.conv.bias, y, ci, co, length, KS=ks, PAD=pad,
                             BLOCK_CO=bco, BLOCK_L=bl, num_warps=4)
        return y
