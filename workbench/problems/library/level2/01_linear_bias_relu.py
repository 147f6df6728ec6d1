"""Linear layer then ReLU, fp32: relu(x @ W.T + b), x (4096, 2048), W (2048, 2048).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul-epilogue"
DTYPE = "fp32"
TAGS = ('matmul', 'fused', 'compute-bound')

M, K, N = 4096, 2048, 2048
CPU_SIZES = {"M": 37, "K": 51, "N": 29}


def flops():
    return 2 * M * N * K + 2 * M * N


def bytes_moved():
    return (M * K + N * K + N + M * N) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return []
