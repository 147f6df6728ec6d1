"""Reverse (suffix) cumulative sum over the last dimension of a (4096, 8192) fp32 matrix.

y[i, j] = sum_{k >= j} x[i, k], written as flip(cumsum(flip(x))). Memory bound: one read and
one write of x (the reference makes three passes: flip, cumsum, flip).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "scan"
DTYPE = "fp32"
TAGS = ('scan', 'memory-bound')

M, N = 4096, 8192
CPU_SIZES = {"M": 19, "N": 347}


def flops():
    return M * N


def bytes_moved():
    return 2 * M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.flip(torch.cumsum(torch.flip(x, [-1]), -1), [-1])


def get_inputs():
    return [torch.rand(M, N)]


def get_init_inputs():
    return []
