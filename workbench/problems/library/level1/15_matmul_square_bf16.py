"""Square bf16 matrix product C = A @ B, A and B of shape (4096, 4096), fp32 accumulation.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul"
DTYPE = "bf16"
TAGS = ('matmul', 'compute-bound')

M = N = K = 4096
CPU_SIZES = {"M": 70, "N": 48, "K": 96}


def flops():
    return 2 * M * N * K


def bytes_moved():
    return (M * K + K * N + M * N) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16), torch.randn(K, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
