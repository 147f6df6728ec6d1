"""ELU (alpha 1.0) of a (4096, 8192) fp32 tensor: y = F.elu(x, alpha=1.0).

y = x where x > 0, else alpha * (exp(x) - 1). Elementwise, one read and one write of x (32M
elements). Memory bound.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "activation"
DTYPE = "fp32"
TAGS = ('elementwise', 'memory-bound')

M, N = 4096, 8192
CPU_SIZES = {"M": 41, "N": 187}


def flops():
    return 4 * M * N  # compare, exp, subtract, scale/select per element


def bytes_moved():
    return 2 * M * N * 4  # read x, write y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.elu(x, alpha=1.0)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32) * 2.0]


def get_init_inputs():
    return []
