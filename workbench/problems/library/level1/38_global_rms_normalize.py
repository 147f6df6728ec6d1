"""Whole-tensor RMS normalisation of a (4096, 8192) fp32 matrix: y = x / sqrt(mean(x^2)),
written as x / (||x||_2 / sqrt(numel)).

The 2-norm is taken over all elements (torch.linalg.vector_norm), so a global reduction must
finish before the elementwise pass. At least one read and one write of x. (Scaled by
sqrt(numel) so the outputs are O(1): a unit-norm output of 33M elements would be far below the
fp32 absolute tolerance, and a wrong kernel could pass.)
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "norm"
DTYPE = "fp32"
TAGS = ('reduction', 'memory-bound')

M, N = 4096, 8192
CPU_SIZES = {"M": 27, "N": 211}


def flops():
    return 3 * M * N  # square, add, scale


def bytes_moved():
    return 2 * M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / (torch.linalg.vector_norm(x) / math.sqrt(x.numel()))


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
