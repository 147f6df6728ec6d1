"""Exact (erf) GELU then LayerNorm over the last dim, fp32: LN(gelu(x)), x (8192, 2048),
LayerNorm(2048) with elementwise affine (weight and bias, eps 1e-5).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "norm"
DTYPE = "fp32"
TAGS = ('activation', 'norm', 'fused', 'memory-bound')

M, N = 8192, 2048
CPU_SIZES = {"M": 23, "N": 190}


def flops():
    return 16 * M * N  # erf GELU (~7), LayerNorm (~9: mean, variance, normalise, affine)


def bytes_moved():
    return (2 * M * N + 2 * N) * 4  # read x, weight, bias; write y


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(N)
        with torch.no_grad():
            self.ln.weight.normal_(1.0, 0.1)
            self.ln.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.ln(F.gelu(x))


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
