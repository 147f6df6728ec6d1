"""bf16 linear layer plus a residual: y = x @ W.T + b + r, x (8192, 4096), W (4096, 4096).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul-epilogue"
DTYPE = "bf16"
TAGS = ('matmul', 'fused', 'residual')

M, K, N = 8192, 4096, 4096
CPU_SIZES = {"M": 33, "K": 48, "N": 40}


def flops():
    return 2 * M * N * K + 2 * M * N


def bytes_moved():
    return (M * K + N * K + N + 2 * M * N) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N).to(torch.bfloat16)

    def forward(self, x, r):
        return self.fc(x) + r


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16), torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
