"""Whole cell in one kernel: per (64 batch rows x 64 hidden units) tile, four fp32 accumulators (i, f, g, o) over x @ W_ih.T then h @ W_hh.T (exact fp32 dots), biases and the c/h update in the epilogue; K chunks 32, 4 warps, 2 stages."""
import math
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _lstm_cell(x_ptr, h_ptr, c_ptr, wi_ptr, wh_ptr, bi_ptr, bh_ptr, h_out, c_out, B, IN, HID,
               BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_K: tl.constexpr):
    """A (batch rows x hidden units) tile: the i, f, g, o columns of x @ W_ih.T + h @ W_hh.T accumulate in four
    fp32 tiles against one shared x (then h) tile; the cell update runs in the epilogue, gates never hit memory."""
    rb = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    rj = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    rk = tl.arange(0, BLOCK_K)
    mb = rb < B
    mj = rj < HID
    acc_i = tl.zeros((BLOCK_B, BLOCK_H), tl.float32)
    acc_f = tl.zeros((BLOCK_B, BLOCK_H), tl.float32)
    acc_g = tl.zeros((BLOCK_B, BLOCK_H), tl.float32)
    acc_o = tl.zeros((BLOCK_B, BLOCK_H), tl.float32)
    for k0 in range(0, IN, BLOCK_K):
        kk = k0 + rk
        a = tl.load(x_ptr + rb[:, None] * IN + kk[None, :], mask=mb[:, None] & (kk[None, :] < IN), other=0.0)
        wm = (kk[:, None] < IN) & mj[None, :]
        w = wi_ptr + rj[None, :] * IN + kk[:, None]
        acc_i += tl.dot(a, tl.load(w, mask=wm, other=0.0), input_precision="ieee")
        acc_f += tl.dot(a, tl.load(w + HID * IN, mask=wm, other=0.0), input_precision="ieee")
        acc_g += tl.dot(a, tl.load(w + 2 * HID * IN, mask=wm, other=0.0), input_precision="ieee")
        acc_o += tl.dot(a, tl.load(w + 3 * HID * IN, mask=wm, other=0.0), input_precision="ieee")
    for k0 in range(0, HID, BLOCK_K):
        kk = k0 + rk
        a = tl.load(h_ptr + rb[:, None] * HID + kk[None, :], mask=mb[:, None] & (kk[None, :] < HID), other=0.0)
        wm = (kk[:, None] < HID) & mj[None, :]
        w = wh_ptr + rj[None, :] * HID + kk[:, None]
        acc_i += tl.dot(a, tl.load(w, mask=wm, other=0.0), input_precision="ieee")
        acc_f += tl.dot(a, tl.load(w + HID * HID, mask=wm, other=0.0), input_precision="ieee")
        acc_g += tl.dot(a, tl.load(w + 2 * HID * HID, mask=wm, other=0.0), input_precision="ieee")
        acc_o += tl.dot(a, tl.load(w + 3 * HID * HID, mask=wm, other=0.0), input_precision="ieee")
    acc_i += (tl.load(bi_ptr + rj, mask=mj, other=0.0) + tl.load(bh_ptr + rj, mask=mj, other=0.0))[None, :]
    acc_f += (tl.load(bi_ptr + HID + rj, mask=mj, other=0.0) + tl.load(bh_ptr + HID + rj, mask=mj, other=0.0))[None, :]
    acc_g += (tl.load(bi_ptr + 2 * HID + rj, mask=mj, other=0.0) + tl.load(bh_ptr + 2 * HID + rj, mask=mj, other=0.0))[None, :]
    acc_o += (tl.load(bi_ptr + 3 * HID + rj, mask=mj, other=0.0) + tl.load(bh_ptr + 3 * HID + rj, mask=mj, other=0.0))[None, :]
    m2 = mb[:, None] & mj[None, :]
    off = rb[:, None] * HID + rj[None, :]
    c = tl.load(c_ptr + off, mask=m2, other=0.0)
    c_new = tl.sigmoid(acc_f) * c + tl.sigmoid(acc_i) * (2.0 * tl.sigmoid(2.0 * acc_g) - 1.0)
    h_new = tl.sigmoid(acc_o) * (2.0 * tl.sigmoid(2.0 * c_new) - 1.0)
    tl.store(c_out + off, c_new, mask=m2)
    tl.store(h_out + off, h_new, mask=m2)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters in by name.
        self.ih = nn.Linear(1, 1)
        self.hh = nn.Linear(1, 1)

    def forward(self, x, h, c):
        x, h, c = x.contiguous(), h.contiguous(), c.contiguous()
        b, hid = c.shape
        h_new = torch.empty_like(c)
        c_new = torch.empty_like(c)
        grid = (triton.cdiv(b, 64), triton.cdiv(hid, 64))
        _lstm_cell[grid](x, h, c, self.ih.weight.contiguous(), self.hh.weight.contiguous(), self.ih.bias, self.hh.bias,
                         h_new, c_new, b, x.shape[1], hid, BLOCK_B=64, BLOCK_H=64, BLOCK_K=32, num_warps=4, num_stages=2)
        return h_new, c_new
