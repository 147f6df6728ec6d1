"""2x2 max pooling with stride 2 on a (32, 64, 256, 256) fp32 tensor.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "pooling"
DTYPE = "fp32"
TAGS = ('pooling', 'memory-bound')

BATCH, C, H, W = 32, 64, 256, 256
CPU_SIZES = {"BATCH": 2, "C": 3, "H": 14, "W": 18}


def flops():
    return BATCH * C * H * W


def bytes_moved():
    return (BATCH * C * H * W + BATCH * C * (H // 2) * (W // 2)) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.max_pool2d(x, 2, 2)


def get_inputs():
    return [torch.randn(BATCH, C, H, W)]


def get_init_inputs():
    return []
