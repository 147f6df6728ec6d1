"""Instance normalisation without affine parameters or running statistics, eps 1e-5, of a
(32, 64, 128, 128) fp32 tensor: each (n, c) plane is normalised over its H*W = 16384 values.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "norm"
DTYPE = "fp32"
TAGS = ('norm', 'reduction', 'memory-bound')

BATCH, C, H, W = 32, 64, 128, 128
CPU_SIZES = {"BATCH": 3, "C": 5, "H": 13, "W": 11}


def flops():
    return 7 * BATCH * C * H * W  # sum, square-sum, subtract, scale (and their adds)


def bytes_moved():
    return 2 * BATCH * C * H * W * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.instance_norm(x, eps=1e-5)


def get_inputs():
    return [torch.randn(BATCH, C, H, W) * 2 + 0.5]


def get_init_inputs():
    return []
