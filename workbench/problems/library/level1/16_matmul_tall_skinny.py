"""Tall-skinny fp32 product: A (131072, 512) @ B (512, 256). Memory-heavy for a matmul:
A is read once, the small B stays in cache.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul"
DTYPE = "fp32"
TAGS = ('matmul', 'compute-bound')

M, K, N = 131072, 512, 256
CPU_SIZES = {"M": 300, "K": 40, "N": 24}


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
