"""Residual add, LayerNorm, exact (erf) GELU, all in bf16: gelu(LN(x + r)), x, r of shape
(8192, 2048) bf16, LayerNorm(2048) with bf16 weight and bias.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "norm"
DTYPE = "bf16"
TAGS = ('residual', 'norm', 'activation', 'fused', 'memory-bound')

M, N = 8192, 2048
CPU_SIZES = {"M": 23, "N": 190}


def flops():
    return 17 * M * N  # add, LayerNorm (~9), erf GELU (~7)


def bytes_moved():
    return (3 * M * N + 2 * N) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(N)
        with torch.no_grad():
            self.ln.weight.normal_(1.0, 0.1)
            self.ln.bias.normal_(0.0, 0.1)
        self.ln = self.ln.to(torch.bfloat16)

    def forward(self, x, r):
        return F.gelu(self.ln(x + r))


def get_inputs():
    return [torch.randn(M, N, dtype=torch.bfloat16), torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
