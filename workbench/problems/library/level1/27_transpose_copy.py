"""Materialised transpose of a (8192, 8192) fp32 matrix: y = x.T.contiguous().
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "layout"
DTYPE = "fp32"
TAGS = ('transpose', 'memory-bound')

M, N = 8192, 8192
CPU_SIZES = {"M": 45, "N": 71}


def flops():
    return 0


def bytes_moved():
    return 2 * M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.t().contiguous()


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
