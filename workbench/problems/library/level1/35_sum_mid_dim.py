"""Sum over the middle dimension of a (64, 1024, 1024) fp32 tensor -> (64, 1024).

y[b, n] = sum_r x[b, r, n]. A strided reduction: consecutive reduced elements are N floats
apart, while the kept last axis is contiguous. Memory bound: one read of x.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "reduction"
DTYPE = "fp32"
TAGS = ('reduction', 'memory-bound')

B, R, N = 64, 1024, 1024
CPU_SIZES = {"B": 3, "R": 67, "N": 203}


def flops():
    return B * R * N


def bytes_moved():
    return B * R * N * 4 + B * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum(dim=1)


def get_inputs():
    return [torch.randn(B, R, N)]


def get_init_inputs():
    return []
