"""fp16 linear layer then SiLU: silu(x @ W.T + b), x (4096, 4096), W (4096, 4096); the whole
model (weights, inputs, output) in fp16.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul-epilogue"
DTYPE = "fp16"
TAGS = ('matmul', 'fused', 'compute-bound')

M, K, N = 4096, 4096, 4096
CPU_SIZES = {"M": 37, "K": 70, "N": 53}


def flops():
    return 2 * M * N * K + 5 * M * N  # GEMM, bias add, silu (negate, exp, add, divide)


def bytes_moved():
    return (M * K + N * K + N + M * N) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N).half()

    def forward(self, x):
        return F.silu(self.fc(x))


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16)]


def get_init_inputs():
    return []
