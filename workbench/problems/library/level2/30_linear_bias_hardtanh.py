"""Linear layer then hardtanh, fp32: clamp(x @ W.T + b, -1, 1), x (4096, 2048), W (2048, 2048),
b (2048,); F.hardtanh with min -1 and max 1.
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
    return 2 * M * N * K + 3 * M * N  # GEMM, bias add, clamp (max, min)


def bytes_moved():
    return (M * K + N * K + N + M * N) * 4  # read x, W, b; write y


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N)

    def forward(self, x):
        return F.hardtanh(self.fc(x), -1.0, 1.0)


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return []
