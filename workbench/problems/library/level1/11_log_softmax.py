"""log-softmax over the last dimension of a (4096, 8192) fp32 matrix.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "softmax"
DTYPE = "fp32"
TAGS = ('reduction', 'memory-bound')

M, N = 4096, 8192
CPU_SIZES = {"M": 31, "N": 257}


def flops():
    return 5 * M * N


def bytes_moved():
    return 2 * M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(M, N) * 3]


def get_init_inputs():
    return []
