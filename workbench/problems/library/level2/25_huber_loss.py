"""Huber loss (delta 1.0, mean reduction) of two (8192, 8192) fp32 matrices -> 0-dim scalar:
F.huber_loss(pred, target, delta=1.0). Memory bound: one read of each input, a global mean.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "loss"
DTYPE = "fp32"
TAGS = ('loss', 'reduction', 'memory-bound', 'fused')

M, N = 8192, 8192
CPU_SIZES = {"M": 37, "N": 203}


def flops():
    return 5 * M * N  # subtract, abs, compare, square-or-linear, sum


def bytes_moved():
    return 2 * M * N * 4 + 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return F.huber_loss(pred, target, delta=1.0)


def get_inputs():
    return [torch.randn(M, N), torch.randn(M, N)]


def get_init_inputs():
    return []
