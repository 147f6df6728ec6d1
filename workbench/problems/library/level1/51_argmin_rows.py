"""Index of the minimum over the last dimension of an (16384, 4096) fp32 matrix -> int64 (16384,).

y[m] = argmin_n x[m, n]; on ties the first (smallest) index wins, as in torch.argmin. Memory
bound: one read of x.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "reduction"
DTYPE = "fp32"
TAGS = ('reduction', 'memory-bound')

M, N = 16384, 4096
CPU_SIZES = {"M": 37, "N": 263}


def flops():
    return M * N  # one compare per element


def bytes_moved():
    return M * N * 4 + M * 8  # read x, write int64 indices


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.argmin(x, dim=1)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
