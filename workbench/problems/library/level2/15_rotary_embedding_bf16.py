"""Apply rotary position embedding to a bf16 tensor x (8, 2048, 32, 128) (batch, seq, heads, dim):
pairs (x1, x2) = halves of the last dim, rotated by cos/sin tables of shape (seq, dim / 2).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "elementwise"
DTYPE = "bf16"
TAGS = ('elementwise', 'rope', 'memory-bound')

BATCH, SEQ, HEADS, DIM = 8, 2048, 32, 128
CPU_SIZES = {"BATCH": 2, "SEQ": 13, "HEADS": 3, "DIM": 16}


def flops():
    return 3 * BATCH * SEQ * HEADS * DIM


def bytes_moved():
    return (2 * BATCH * SEQ * HEADS * DIM + SEQ * DIM) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, cos, sin):
        x1, x2 = x.chunk(2, dim=-1)
        c = cos[None, :, None, :]
        s = sin[None, :, None, :]
        return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1)


def get_inputs():
    ang = torch.rand(SEQ, DIM // 2) * 6.283
    return [torch.randn(BATCH, SEQ, HEADS, DIM, dtype=torch.bfloat16), ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16)]


def get_init_inputs():
    return []
