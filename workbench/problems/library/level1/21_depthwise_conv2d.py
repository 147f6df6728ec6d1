"""Depthwise 3x3 convolution (groups = channels), stride 1, padding 1, fp32:
input (32, 128, 128, 128), with bias. Memory bound.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "conv"
DTYPE = "fp32"
TAGS = ('conv', 'memory-bound', 'depthwise')

BATCH, C, H, W = 32, 128, 128, 128
CPU_SIZES = {"BATCH": 2, "C": 6, "H": 13, "W": 9}


def flops():
    return 2 * BATCH * C * H * W * 9


def bytes_moved():
    return (2 * BATCH * C * H * W + C * 10) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C, C, 3, padding=1, groups=C, bias=True)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, C, H, W)]


def get_init_inputs():
    return []
