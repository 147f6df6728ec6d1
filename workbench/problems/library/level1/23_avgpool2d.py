"""3x3 average pooling, stride 2, padding 1 (zero padding counted) on a (32, 64, 256, 256) fp32 tensor.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "pooling"
DTYPE = "fp32"
TAGS = ('pooling', 'memory-bound')

BATCH, C, H, W = 32, 64, 256, 256
CPU_SIZES = {"BATCH": 2, "C": 3, "H": 15, "W": 17}


def flops():
    return BATCH * C * (H // 2) * (W // 2) * 9


def bytes_moved():
    return (BATCH * C * H * W + BATCH * C * (H // 2) * (W // 2)) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.avg_pool2d(x, 3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(BATCH, C, H, W)]


def get_init_inputs():
    return []
