"""fp32 matrix-vector product y = A @ x, A (16384, 8192). Purely bandwidth bound.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul"
DTYPE = "fp32"
TAGS = ('matmul', 'memory-bound')

M, K = 16384, 8192
CPU_SIZES = {"M": 130, "K": 77}


def flops():
    return 2 * M * K


def bytes_moved():
    return (M * K + K + M) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.mv(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K)]


def get_init_inputs():
    return []
