"""Gather along dim 1: y = torch.gather(x, 1, idx), x (8192, 4096) fp32, idx (8192, 2048) int64
uniform in [0, 4096) -> y (8192, 2048) fp32. y[i, j] = x[i, idx[i, j]].

Data movement only: random reads within each row of x (nearly every 32-byte sector of x is
touched), a streaming read of idx and a streaming write of y.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "gather"
DTYPE = "fp32"
TAGS = ('gather', 'memory-bound')

M, N, K = 8192, 4096, 2048
CPU_SIZES = {"M": 23, "N": 301, "K": 157}


def flops():
    return 0


def bytes_moved():
    return M * N * 4 + M * K * 8 + M * K * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return torch.gather(x, 1, idx)


def get_inputs():
    return [torch.randn(M, N), torch.randint(0, N, (M, K))]


def get_init_inputs():
    return []
