"""1-D max pooling, kernel 4, stride 2, padding 1, on a (32, 128, 8192) fp32 tensor ->
(32, 128, 4096).

y[b, c, j] = max(x[b, c, 2j-1 : 2j+3]), positions outside [0, L) ignored (padding counts as
-inf). Overlapping windows: each input is read by up to two outputs. Memory bound: one read of x
and one write of y.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "pooling"
DTYPE = "fp32"
TAGS = ('pooling', 'memory-bound')

BATCH, C, L = 32, 128, 8192
KSIZE, STRIDE, PAD = 4, 2, 1
CPU_SIZES = {"BATCH": 2, "C": 5, "L": 301}


def _l_out():
    return (L + 2 * PAD - KSIZE) // STRIDE + 1


def flops():
    return BATCH * C * _l_out() * (KSIZE - 1)  # KSIZE - 1 comparisons per output


def bytes_moved():
    return (BATCH * C * L + BATCH * C * _l_out()) * 4  # read x, write y


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool1d(KSIZE, stride=STRIDE, padding=PAD)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, C, L)]


def get_init_inputs():
    return []
