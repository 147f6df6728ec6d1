"""Elementwise select y = where(x > 0, x, alpha * exp(x) - alpha) (an ELU written with where),
on a (8192, 8192) fp32 tensor, alpha = 1.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "activation"
DTYPE = "fp32"
TAGS = ('elementwise', 'memory-bound')

M, N = 8192, 8192
CPU_SIZES = {"M": 35, "N": 129}


def flops():
    return 4 * M * N


def bytes_moved():
    return 2 * M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.where(x > 0, x, torch.exp(x) - 1.0)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
