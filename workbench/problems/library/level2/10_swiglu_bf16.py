"""SwiGLU gate on a (16384, 8192) bf16 tensor: split the last dim in halves a, b; y = silu(a) * b.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "activation"
DTYPE = "bf16"
TAGS = ('elementwise', 'gated', 'fused', 'memory-bound')

M, N = 16384, 8192
CPU_SIZES = {"M": 27, "N": 188}


def flops():
    return 5 * M * N // 2


def bytes_moved():
    return (M * N + M * N // 2) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        return F.silu(a) * b


def get_inputs():
    return [torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
