"""LayerNorm then a linear layer, fp32: LN(x) @ W.T + b, x (8192, 1024), W (2048, 1024).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul-prologue"
DTYPE = "fp32"
TAGS = ('norm', 'matmul', 'fused')

M, K, N = 8192, 1024, 2048
CPU_SIZES = {"M": 26, "K": 44, "N": 39}


def flops():
    return 2 * M * N * K + 8 * M * K


def bytes_moved():
    return (M * K + N * K + N + 2 * K + M * N) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(K)
        self.fc = nn.Linear(K, N)

    def forward(self, x):
        return self.fc(self.ln(x))


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return []
