"""LayerNorm over the last dimension (4096) of a (8192, 4096) fp32 matrix, with learned
weight and bias, eps 1e-5.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "norm"
DTYPE = "fp32"
TAGS = ('reduction', 'memory-bound')

M, N = 8192, 4096
CPU_SIZES = {"M": 23, "N": 190}


def flops():
    return 8 * M * N


def bytes_moved():
    return (2 * M * N + 2 * N) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(N, eps=1e-5)
        with torch.no_grad():
            self.ln.weight.normal_(1.0, 0.1)
            self.ln.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(M, N) * 2 + 0.5]


def get_init_inputs():
    return []
