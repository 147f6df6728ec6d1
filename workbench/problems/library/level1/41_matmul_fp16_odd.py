"""fp16 matrix product C = A @ B with A (3000, 2000) and B (2000, 2500), fp32 accumulation,
fp16 output. No size is a multiple of the usual tiles: edge tiles need masks.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul"
DTYPE = "fp16"
TAGS = ('matmul', 'compute-bound')

M, K, N = 3000, 2000, 2500
CPU_SIZES = {"M": 67, "K": 45, "N": 53}


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
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs():
    return []
