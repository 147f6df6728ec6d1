"""Linear layer then LayerNorm, fp32: LN(x @ W.T + b), x (8192, 1024), W (1024, 1024).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul-epilogue"
DTYPE = "fp32"
TAGS = ('matmul', 'norm', 'fused')

M, K, N = 8192, 1024, 1024
CPU_SIZES = {"M": 31, "K": 45, "N": 56}


def flops():
    return 2 * M * N * K + 8 * M * N


def bytes_moved():
    return (M * K + N * K + 3 * N + M * N) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N)
        self.ln = nn.LayerNorm(N)

    def forward(self, x):
        return self.ln(self.fc(x))


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return []
