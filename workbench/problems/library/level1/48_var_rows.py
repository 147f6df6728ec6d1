"""Unbiased variance over dim 1 of a (8192, 8192) fp32 matrix -> (8192,): y = torch.var(x, dim=1).

y[m] = sum_n (x[m, n] - mean_m)^2 / (N - 1), mean_m = sum_n x[m, n] / N (Bessel's correction).
Inputs have a nonzero mean (randn * 2 + 0.5), so a naive sum / sum-of-squares form loses digits to
cancellation. Memory bound: one read of x (64M elements), one small write.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "reduction"
DTYPE = "fp32"
TAGS = ('reduction', 'memory-bound')

M, N = 8192, 8192
CPU_SIZES = {"M": 27, "N": 389}


def flops():
    return 4 * M * N + 2 * M  # add (mean), subtract, square, add per element; two divides per row


def bytes_moved():
    return M * N * 4 + M * 4  # read x once, write y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.var(x, dim=1)


def get_inputs():
    return [torch.randn(M, N) * 2.0 + 0.5]


def get_init_inputs():
    return []
