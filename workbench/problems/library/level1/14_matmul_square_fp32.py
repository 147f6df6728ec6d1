"""Square fp32 matrix product C = A @ B with A, B of shape (4096, 4096). Full fp32
(no TF32): the tolerance is fp32's.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul"
DTYPE = "fp32"
TAGS = ('matmul', 'compute-bound')

M = N = K = 4096
CPU_SIZES = {"M": 67, "N": 45, "K": 93}


def flops():
    return 2 * M * N * K


def bytes_moved():
    return (M * K + K * N + M * N) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
