"""Batched bf16 matrix product: (64, 1024, 512) @ (64, 512, 1024) -> (64, 1024, 1024).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul"
DTYPE = "bf16"
TAGS = ('matmul', 'compute-bound')

BATCH, M, K, N = 64, 1024, 512, 1024
CPU_SIZES = {"BATCH": 3, "M": 33, "K": 40, "N": 29}


def flops():
    return 2 * BATCH * M * N * K


def bytes_moved():
    return BATCH * (M * K + K * N + M * N) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(BATCH, M, K, dtype=torch.bfloat16), torch.randn(BATCH, K, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
