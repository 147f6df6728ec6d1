"""GroupNorm (32 groups) then SiLU, fp32, on (16, 256, 64, 64).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "norm"
DTYPE = "fp32"
TAGS = ('norm', 'activation', 'fused', 'memory-bound')

BATCH, C, H, W = 16, 256, 64, 64
CPU_SIZES = {"BATCH": 2, "C": 64, "H": 5, "W": 7}


def flops():
    return 10 * BATCH * C * H * W


def bytes_moved():
    return (2 * BATCH * C * H * W + 2 * C) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(32, C)
        with torch.no_grad():
            self.gn.weight.normal_(1.0, 0.1)
            self.gn.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return F.silu(self.gn(x))


def get_inputs():
    return [torch.randn(BATCH, C, H, W)]


def get_init_inputs():
    return []
