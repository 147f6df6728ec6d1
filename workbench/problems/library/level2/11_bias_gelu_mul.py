"""Bias add, exact GELU, then multiply by a gate, fp32: y = gelu(x + b) * g, x and g (8192, 8192).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "activation"
DTYPE = "fp32"
TAGS = ('elementwise', 'fused', 'memory-bound')

M, N = 8192, 8192
CPU_SIZES = {"M": 21, "N": 199}


def flops():
    return 12 * M * N


def bytes_moved():
    return (3 * M * N + N) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(N) * 0.1)

    def forward(self, x, g):
        return F.gelu(x + self.bias) * g


def get_inputs():
    return [torch.randn(M, N), torch.randn(M, N)]


def get_init_inputs():
    return []
