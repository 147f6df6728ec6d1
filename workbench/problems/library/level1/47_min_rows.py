"""Minimum over dim 1 of a (16384, 4096) fp32 matrix -> (16384,): y = torch.amin(x, dim=1).

y[m] = min_n x[m, n]. Memory bound: one read of x (64M elements), one small write.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "reduction"
DTYPE = "fp32"
TAGS = ('reduction', 'memory-bound')

M, N = 16384, 4096
CPU_SIZES = {"M": 29, "N": 317}


def flops():
    return M * N  # one comparison per element


def bytes_moved():
    return M * N * 4 + M * 4  # read x, write y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.amin(x, dim=1)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
