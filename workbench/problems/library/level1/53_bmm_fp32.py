"""Batched fp32 matrix product: torch.bmm of A (32, 512, 512) and B (32, 512, 512) -> (32, 512, 512).
Full fp32 (no TF32): the tolerance is fp32's.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul"
DTYPE = "fp32"
TAGS = ('matmul', 'bmm', 'compute-bound')

BATCH, M, K, N = 32, 512, 512, 512
CPU_SIZES = {"BATCH": 3, "M": 37, "K": 51, "N": 29}


def flops():
    return 2 * BATCH * M * N * K  # one multiply and one add per (b, m, n, k)


def bytes_moved():
    return BATCH * (M * K + K * N + M * N) * 4  # read A and B once, write C once (fp32)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N)]


def get_init_inputs():
    return []
