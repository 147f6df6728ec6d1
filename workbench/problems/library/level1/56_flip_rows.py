"""Reverse the columns of every row of a (8192, 8192) fp32 matrix: y = torch.flip(x, dims=[1]),
y[i, j] = x[i, N - 1 - j]. A memory-bound copy: one read and one write of the matrix.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "layout"
DTYPE = "fp32"
TAGS = ('flip', 'memory-bound')

M, N = 8192, 8192
CPU_SIZES = {"M": 45, "N": 71}


def flops():
    return 0  # a pure copy


def bytes_moved():
    return 2 * M * N * 4  # read x once, write y once


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.flip(x, dims=[1])


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
