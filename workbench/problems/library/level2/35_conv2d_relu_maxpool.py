"""A convolution block: 3x3 convolution with bias (padding 1), ReLU, then 2x2 max pooling with
stride 2; fp32, input (16, 64, 64, 64), 128 output channels -> (16, 128, 32, 32).

Odd heights and widths are floored by the pooling, as nn.MaxPool2d(2) does. ReLU commutes with the
max, so an epilogue may pool first and apply the bias and ReLU to the pooled values.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "conv-block"
DTYPE = "fp32"
TAGS = ('conv', 'pooling', 'activation', 'fused')

BATCH, C_IN, C_OUT, H, W = 16, 64, 128, 64, 64
CPU_SIZES = {"BATCH": 2, "C_IN": 5, "C_OUT": 10, "H": 9, "W": 13}


def flops():
    # the convolution's multiply-adds, bias add and ReLU per conv output, 3 compares per pooled output
    return (2 * BATCH * C_OUT * H * W * C_IN * 9 + 2 * BATCH * C_OUT * H * W
            + 3 * BATCH * C_OUT * (H // 2) * (W // 2))


def bytes_moved():
    # read the input, weights and bias once, write the pooled output
    return (BATCH * C_IN * H * W + C_OUT * C_IN * 9 + C_OUT + BATCH * C_OUT * (H // 2) * (W // 2)) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C_IN, C_OUT, 3, padding=1, bias=True)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        # Exact fp32 on GPUs too: cuDNN would otherwise run the convolutions in TF32, and the
        # candidates are held to fp32 accuracy.
        tf32 = torch.backends.cudnn.allow_tf32
        torch.backends.cudnn.allow_tf32 = False
        try:
            return self.pool(torch.relu(self.conv(x)))
        finally:
            torch.backends.cudnn.allow_tf32 = tf32


def get_inputs():
    return [torch.randn(BATCH, C_IN, H, W)]


def get_init_inputs():
    return []
