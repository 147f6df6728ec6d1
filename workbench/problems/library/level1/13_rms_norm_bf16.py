"""RMSNorm over the last dimension (4096) of a (16384, 4096) bf16 matrix:
y = x / sqrt(mean(x^2) + eps) * w, statistics in fp32, eps 1e-6.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "norm"
DTYPE = "bf16"
TAGS = ('reduction', 'memory-bound')

M, N = 16384, 4096
CPU_SIZES = {"M": 19, "N": 222}


def flops():
    return 4 * M * N


def bytes_moved():
    return (2 * M * N + N) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(N, dtype=torch.bfloat16) * 0.1 + 1.0)

    def forward(self, x):
        xf = x.float()
        r = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
        return (xf * r).to(torch.bfloat16) * self.weight


def get_inputs():
    return [torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
