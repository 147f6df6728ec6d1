"""Softmax over the last dimension of a (4096, 8192) fp32 matrix.

y = softmax(x, dim=-1). Memory bound: one read and one write of x.
"""
import torch
import torch.nn as nn

CATEGORY = "softmax"
DTYPE = "fp32"
TAGS = ("reduction", "memory-bound")

M, N = 4096, 8192
CPU_SIZES = {"M": 48, "N": 200}


def flops():
    return 5 * M * N  # max, subtract, exp, sum, divide


def bytes_moved():
    return 2 * M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
