"""Inclusive prefix sum over the last dimension of a (4096, 8192) fp32 matrix.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "scan"
DTYPE = "fp32"
TAGS = ('scan', 'memory-bound')

M, N = 4096, 8192
CPU_SIZES = {"M": 21, "N": 333}


def flops():
    return M * N


def bytes_moved():
    return 2 * M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=-1)


def get_inputs():
    return [torch.rand(M, N)]


def get_init_inputs():
    return []
