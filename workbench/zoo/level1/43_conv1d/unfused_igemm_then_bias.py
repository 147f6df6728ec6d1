"""Unfused: an implicit-GEMM 1-D convolution (ieee tl.dot, tiles 64x128, BLOCK_K 32, 4 warps)
writes the result without bias, then a second elementwise kernel adds the per-channel bias in
place (one extra read and write of the output)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv1d_igemm(x_ptr, w_ptr, y_ptr, CI, CO, L, KS: tl.constexpr, PAD: tl.constexpr,
                  BLOCK_CO: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_K: tl.constexpr):
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
        wt = tl.load(w_ptr + co[:, None] * KTOT + k[None, :], mask=(co[:, None] < CO) & (k[None, :] < KTOT), other=0.0)
        li = lo[None, :] + (k % KS)[:, None] - PAD
        ok = (k[:, None] < KTOT) & (li >= 0) & (li < L)
        xt = tl.load(x_base + (k // KS)[:, None] * L + li, mask=ok, other=0.0)
        acc += tl.dot(wt, xt, input_precision="ieee")
    omask = (co[:, None] < CO) & (lo[None, :] < L)
    tl.store(y_ptr + n.to(tl.int64) * CO * L + co[:, None] * L + lo[None, :], acc, mask=omask)


@triton.jit
def _add_bias(y_ptr, b_ptr, total, CO, L, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    c = (offs // L) % CO
    y = tl.load(y_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, y + tl.load(b_ptr + c, mask=m, other=0.0), mask=m)


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
        block = 1024
        y = torch.empty((nb, co, length + 2 * pad - ks + 1), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(co, bco), triton.cdiv(length, bl), nb)
        _conv1d_igemm[grid](x, w, y, ci, co, length, KS=ks, PAD=pad,
                            BLOCK_CO=bco, BLOCK_L=bl, BLOCK_K=32, num_warps=4, num_stages=2)
        total = y.numel()
        _add_bias[(triton.cdiv(total, block),)](y, self.conv.bias, total, co, y.shape[2], BLOCK=block, num_warps=4)
        return y
