"""Exact (erf) GELU of a (8192, 8192) fp32 tensor. Memory bound; erf costs a few FLOPs.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "activation"
DTYPE = "fp32"
TAGS = ('elementwise', 'memory-bound')

M, N = 8192, 8192
CPU_SIZES = {"M": 37, "N": 203}


def flops():
    return 8 * M * N


def bytes_moved():
    return 2 * M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []
