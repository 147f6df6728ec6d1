"""The two gate GEMMs are left to PyTorch (F.linear, cuBLAS fp32); only the gate sum and the cell update are a Triton kernel (2048 per program, 8 warps)."""
import math
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl
import torch.nn.functional as F


@triton.jit
def _cell(ga_ptr, gb_ptr, c_ptr, h_out, c_out, B, HID, TWO: tl.constexpr, BLOCK: tl.constexpr):
    """Elementwise cell update over flat (batch, unit) blocks from gate pre-activations ga (+ gb when TWO),
    both (B, 4 * HID) row-major."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < B * HID
    row = offs // HID
    j = offs % HID
    g0 = row * (4 * HID) + j
    gi = tl.load(ga_ptr + g0, mask=m, other=0.0)
    gf = tl.load(ga_ptr + g0 + HID, mask=m, other=0.0)
    gg = tl.load(ga_ptr + g0 + 2 * HID, mask=m, other=0.0)
    go = tl.load(ga_ptr + g0 + 3 * HID, mask=m, other=0.0)
    if TWO:
        gi += tl.load(gb_ptr + g0, mask=m, other=0.0)
        gf += tl.load(gb_ptr + g0 + HID, mask=m, other=0.0)
        gg += tl.load(gb_ptr + g0 + 2 * HID, mask=m, other=0.0)
        go += tl.load(gb_ptr + g0 + 3 * HID, mask=m, other=0.0)
    c = tl.load(c_ptr + offs, mask=m, other=0.0)
    c_new = tl.sigmoid(gf) * c + tl.sigmoid(gi) * (2.0 * tl.sigmoid(2.0 * gg) - 1.0)
    h_new = tl.sigmoid(go) * (2.0 * tl.sigmoid(2.0 * c_new) - 1.0)
    tl.store(c_out + offs, c_new, mask=m)
    tl.store(h_out + offs, h_new, mask=m)


def cell(ga, gb, c, block=1024, warps=4):
    b, hid = c.shape
    h_new = torch.empty_like(c)
    c_new = torch.empty_like(c)
    _cell[(triton.cdiv(b * hid, block),)](ga, gb if gb is not None else ga, c.contiguous(), h_new, c_new, b, hid,
                                          TWO=gb is not None, BLOCK=block, num_warps=warps)
    return h_new, c_new


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters in by name.
        self.ih = nn.Linear(1, 1)
        self.hh = nn.Linear(1, 1)

    def forward(self, x, h, c):
        gx = F.linear(x, self.ih.weight, self.ih.bias)
        gh = F.linear(h, self.hh.weight, self.hh.bias)
        return cell(gx, gh, c, block=2048, warps=8)
