"""fp32 product with a transposed right operand: C = A @ B.T, A (4096, 2048), B (4096, 2048)
(the layout of a linear layer's weight).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul"
DTYPE = "fp32"
TAGS = ('matmul', 'compute-bound')

M, N, K = 4096, 4096, 2048
CPU_SIZES = {"M": 50, "N": 38, "K": 71}


def flops():
    return 2 * M * N * K


def bytes_moved():
    return (M * K + N * K + M * N) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b.t()


def get_inputs():
    return [torch.randn(M, K), torch.randn(N, K)]


def get_init_inputs():
    return []
