"""bf16 linear layer then tanh-approximate GELU: gelu(x @ W.T + b), x (8192, 4096), W (4096, 4096).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul-epilogue"
DTYPE = "bf16"
TAGS = ('matmul', 'fused', 'compute-bound')

M, K, N = 8192, 4096, 4096
CPU_SIZES = {"M": 40, "K": 64, "N": 48}


def flops():
    return 2 * M * N * K + 10 * M * N


def bytes_moved():
    return (M * K + N * K + N + M * N) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N).to(torch.bfloat16)

    def forward(self, x):
        return F.gelu(self.fc(x), approximate="tanh")


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
