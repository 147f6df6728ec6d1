"""3x3 convolution, stride 1, padding 1, fp32: input (32, 64, 128, 128), 64 output channels, no bias.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "conv"
DTYPE = "fp32"
TAGS = ('conv', 'compute-bound')

BATCH, C_IN, C_OUT, H, W = 32, 64, 64, 128, 128
CPU_SIZES = {"BATCH": 2, "C_IN": 5, "C_OUT": 7, "H": 11, "W": 13}


def flops():
    return 2 * BATCH * C_OUT * H * W * C_IN * 9


def bytes_moved():
    return (BATCH * C_IN * H * W + BATCH * C_OUT * H * W + C_OUT * C_IN * 9) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C_IN, C_OUT, 3, padding=1, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, C_IN, H, W)]


def get_init_inputs():
    return []
