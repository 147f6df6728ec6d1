"""Sum of every element of a (67108864,) fp32 vector (2^26 elements) -> a 0-d fp32 scalar.

y = torch.sum(x). A whole-tensor reduction: many programs must combine their partial sums
(two stages, atomics, or one long serial loop). Memory bound: one read of x. The input is 1-D
so the checker's fp32 tolerance scales with the number of summed terms.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "reduction"
DTYPE = "fp32"
TAGS = ('reduction', 'memory-bound')

N = 1 << 26
CPU_SIZES = {"N": 40009}


def flops():
    return N  # one add per element


def bytes_moved():
    return N * 4 + 4  # read x, write the scalar


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
