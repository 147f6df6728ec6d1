"""tanh of a (16384, 8192) bf16 tensor.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "activation"
DTYPE = "bf16"
TAGS = ('elementwise', 'memory-bound')

M, N = 16384, 8192
CPU_SIZES = {"M": 37, "N": 203}


def flops():
    return 4 * M * N


def bytes_moved():
    return 2 * M * N * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.tanh(x)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
