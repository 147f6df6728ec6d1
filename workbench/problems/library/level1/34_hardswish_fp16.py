"""Hardswish of a (16384, 8192) fp16 tensor.

y = x * clamp(x + 3, 0, 6) / 6. Memory bound: one read and one write of x.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "activation"
DTYPE = "fp16"
TAGS = ('elementwise', 'memory-bound')

M, N = 16384, 8192
CPU_SIZES = {"M": 37, "N": 203}


def flops():
    return 5 * M * N  # add, max, min, multiply, divide


def bytes_moved():
    return 2 * M * N * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.hardswish(x)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16) * 3.0]


def get_init_inputs():
    return []
