"""fp32 matrix product with a small inner dimension: C = A @ B, A (8192, 64), B (64, 8192),
C (8192, 8192). Full fp32 (no TF32). Writing the 256 MiB output dominates the traffic.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul"
DTYPE = "fp32"
TAGS = ('matmul', 'memory-bound')

M, K, N = 8192, 64, 8192
CPU_SIZES = {"M": 75, "K": 19, "N": 83}


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
