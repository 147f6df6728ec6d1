"""fp16 bias-free linear layer, scaled, plus its own input as a residual:
y = (x @ W.T) * 0.5 + x, x (4096, 4096), W (4096, 4096) (nn.Linear(4096, 4096, bias=False));
weights, inputs and output all fp16. The square weight keeps the output shape equal to x's.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "matmul-epilogue"
DTYPE = "fp16"
TAGS = ('matmul', 'fused', 'residual', 'compute-bound')

M, N = 4096, 4096
CPU_SIZES = {"M": 37, "N": 53}


def flops():
    return 2 * M * N * N + 2 * M * N  # GEMM (K = N), scale, residual add


def bytes_moved():
    return (M * N + N * N + M * N) * 2  # read x (once), W; write y


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(N, N, bias=False).half()

    def forward(self, x):
        return self.fc(x) * 0.5 + x


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return []
