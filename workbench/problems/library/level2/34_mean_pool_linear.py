"""Mean pooling over the sequence then a linear layer, fp32: y = (x.mean(dim=1)) @ W^T + b with
x (128, 512, 1024), W (1024, 1024), b (1024,) -> (128, 1024).

The pooling reads 268 MB and dominates; the GEMM after it is small (M = 128). Pooling can run as a
separate pass or in the GEMM's prologue (the A operand is summed over the sequence as it is loaded).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul-prologue"
DTYPE = "fp32"
TAGS = ('reduction', 'matmul', 'fused', 'memory-bound')

B, S, D, N = 128, 512, 1024, 1024
CPU_SIZES = {"B": 3, "S": 37, "D": 45, "N": 39}


def flops():
    # sequence sum and 1/S scale, the GEMM, the bias add
    return B * S * D + B * D + 2 * B * D * N + B * N


def bytes_moved():
    # read x, W and b once, write y
    return (B * S * D + N * D + N + B * N) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, N)

    def forward(self, x):
        return self.fc(x.mean(dim=1))


def get_inputs():
    return [torch.randn(B, S, D)]


def get_init_inputs():
    return []
