"""Residual add then RMSNorm, bf16: h = x + r; y = h / sqrt(mean(h^2) + 1e-6) * w (statistics in fp32).
x, r of shape (16384, 4096). Returns y.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "norm"
DTYPE = "bf16"
TAGS = ('residual', 'norm', 'fused', 'memory-bound')

M, N = 16384, 4096
CPU_SIZES = {"M": 17, "N": 230}


def flops():
    return 6 * M * N


def bytes_moved():
    return (3 * M * N + N) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(N, dtype=torch.bfloat16) * 0.1 + 1.0)

    def forward(self, x, r):
        h = (x + r).float()
        y = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
        return y.to(torch.bfloat16) * self.weight


def get_inputs():
    return [torch.randn(M, N, dtype=torch.bfloat16), torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
