"""Linear layer then mean squared error against a target, fp32: mean((x @ W.T + b - t)^2),
x (8192, 2048), W (1024, 2048).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul-epilogue"
DTYPE = "fp32"
TAGS = ('matmul', 'loss', 'reduction', 'fused')

M, K, N = 8192, 2048, 1024
CPU_SIZES = {"M": 33, "K": 47, "N": 21}


def flops():
    return 2 * M * N * K + 3 * M * N


def bytes_moved():
    return (M * K + N * K + N + M * N) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N)

    def forward(self, x, t):
        return F.mse_loss(self.fc(x), t)


def get_inputs():
    return [torch.randn(M, K), torch.randn(M, N)]


def get_init_inputs():
    return []
