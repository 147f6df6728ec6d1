"""Per-feature affine transform y = x * scale + shift of a (16384, 4096) fp32 matrix,
with learned scale and shift of shape (4096,).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "elementwise"
DTYPE = "fp32"
TAGS = ('broadcast', 'memory-bound', 'fused')

M, N = 16384, 4096
CPU_SIZES = {"M": 29, "N": 150}


def flops():
    return 2 * M * N


def bytes_moved():
    return (2 * M * N + 2 * N) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(N))
        self.shift = nn.Parameter(torch.randn(N))

    def forward(self, x):
        return x * self.scale + self.shift


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
