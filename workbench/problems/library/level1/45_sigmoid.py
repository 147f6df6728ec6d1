"""Logistic sigmoid of a (8192, 4096) fp32 tensor: y = torch.sigmoid(x) = 1 / (1 + exp(-x)).

Elementwise, one read and one write of x (32M elements). Memory bound.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "activation"
DTYPE = "fp32"
TAGS = ('elementwise', 'memory-bound')

M, N = 8192, 4096
CPU_SIZES = {"M": 37, "N": 203}


def flops():
    return 3 * M * N  # negate-exp, add, divide per element


def bytes_moved():
    return 2 * M * N * 4  # read x, write y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sigmoid(x)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32) * 4.0]


def get_init_inputs():
    return []
