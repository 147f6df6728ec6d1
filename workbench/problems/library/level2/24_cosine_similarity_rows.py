"""Row-wise cosine similarity of two (16384, 2048) fp32 matrices -> (16384,):
F.cosine_similarity(a, b, dim=1, eps=1e-8). Memory bound: one read of a and b.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "reduction"
DTYPE = "fp32"
TAGS = ('reduction', 'memory-bound', 'fused')

M, N = 16384, 2048
CPU_SIZES = {"M": 29, "N": 203}


def flops():
    return 6 * M * N + 6 * M  # three multiply-adds per element; norms, clamps, divide per row


def bytes_moved():
    return 2 * M * N * 4 + M * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return F.cosine_similarity(a, b, dim=1, eps=1e-8)


def get_inputs():
    return [torch.randn(M, N), torch.randn(M, N)]


def get_init_inputs():
    return []
