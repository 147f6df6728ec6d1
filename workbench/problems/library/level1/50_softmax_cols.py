"""Softmax over the first dimension (down the columns) of a (4096, 8192) fp32 matrix.

y = softmax(x, dim=0): every column is normalised over its 4096 rows, so the reduction runs
across the strided axis (elements of one column are N apart in memory). Memory bound: one
read and one write of x at best.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "softmax"
DTYPE = "fp32"
TAGS = ('reduction', 'memory-bound')

M, N = 4096, 8192
CPU_SIZES = {"M": 45, "N": 203}


def flops():
    return 5 * M * N  # max, subtract, exp, sum, divide


def bytes_moved():
    return 2 * M * N * 4  # read x, write y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=0)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
