"""Add a per-column bias (N,) to a (8192, 8192) fp32 matrix: y = x + b[None, :].
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "elementwise"
DTYPE = "fp32"
TAGS = ('broadcast', 'memory-bound')

M, N = 8192, 8192
CPU_SIZES = {"M": 41, "N": 177}


def flops():
    return M * N


def bytes_moved():
    return (2 * M * N + N) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, b):
        return x + b


def get_inputs():
    return [torch.randn(M, N), torch.randn(N)]


def get_init_inputs():
    return []
