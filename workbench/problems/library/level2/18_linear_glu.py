"""Gated linear unit, fp32: h = x @ W.T + b with W (4096, 2048); a, g = halves of h; y = a * sigmoid(g).
x (4096, 2048).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul-epilogue"
DTYPE = "fp32"
TAGS = ('matmul', 'gated', 'fused')

M, K, N = 4096, 2048, 4096
CPU_SIZES = {"M": 30, "K": 36, "N": 50}


def flops():
    return 2 * M * N * K + 4 * M * N


def bytes_moved():
    return (M * K + N * K + N + M * N // 2) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N)

    def forward(self, x):
        a, g = self.fc(x).chunk(2, dim=-1)
        return a * torch.sigmoid(g)


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return []
