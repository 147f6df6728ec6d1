"""Softplus (beta 1, threshold 20) of a (8192, 8192) fp32 tensor.

y = log(1 + exp(x)), and y = x where x > 20. Memory bound: one read and one write of x.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "activation"
DTYPE = "fp32"
TAGS = ('elementwise', 'memory-bound')

M, N = 8192, 8192
CPU_SIZES = {"M": 37, "N": 203}


def flops():
    return 5 * M * N  # abs, exp, add, log, select


def bytes_moved():
    return 2 * M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.softplus(x, beta=1.0, threshold=20.0)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32) * 8.0]


def get_init_inputs():
    return []
