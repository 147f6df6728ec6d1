"""Strict upper triangle of a (8192, 8192) fp32 matrix: y = torch.triu(x, diagonal=1).

y[i, j] = x[i, j] where j > i, else 0. Data movement only; the lower triangle of x need not be
read, so the minimum traffic is the strict upper triangle read plus the full output written.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "layout"
DTYPE = "fp32"
TAGS = ('mask', 'memory-bound')

M, N = 8192, 8192
CPU_SIZES = {"M": 141, "N": 77}


def flops():
    return 0


def bytes_moved():
    upper = sum(max(0, N - i - 1) for i in range(M))  # elements with j > i
    return upper * 4 + M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.triu(x, diagonal=1)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
