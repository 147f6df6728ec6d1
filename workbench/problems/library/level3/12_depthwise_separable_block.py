"""Depthwise-separable convolution block (as in MobileNet), fp32, eval mode: depthwise 3x3 (padding 1,
no bias) + BatchNorm + ReLU, then pointwise 1x1 conv 64 -> 128 (no bias) + BatchNorm + ReLU.
Input (32, 64, 56, 56), output (32, 128, 56, 56).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "conv-block"
DTYPE = "fp32"
TAGS = ('conv', 'depthwise', 'norm', 'block')

BATCH, C_IN, C_OUT, H, W = 32, 64, 128, 56, 56
CPU_SIZES = {"BATCH": 2, "C_IN": 5, "C_OUT": 7, "H": 9, "W": 11}


def flops():
    return BATCH * H * W * (18 * C_IN + 3 * C_IN + 2 * C_IN * C_OUT + 3 * C_OUT)


def bytes_moved():
    return (BATCH * C_IN * H * W + BATCH * C_OUT * H * W + 9 * C_IN + C_IN * C_OUT + 4 * (C_IN + C_OUT)) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(C_IN, C_IN, 3, padding=1, groups=C_IN, bias=False)
        self.bn1 = nn.BatchNorm2d(C_IN)
        self.pw = nn.Conv2d(C_IN, C_OUT, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(C_OUT)
        with torch.no_grad():
            for bn in (self.bn1, self.bn2):
                bn.running_mean.normal_(0, 0.1)
                bn.running_var.uniform_(0.5, 1.5)
                bn.weight.normal_(1, 0.1)
                bn.bias.normal_(0, 0.1)
        self.eval()

    def forward(self, x):
        # Exact fp32 on GPUs too: cuDNN would otherwise run the convolutions in TF32, and the
        # candidates are held to fp32 accuracy.
        tf32 = torch.backends.cudnn.allow_tf32
        torch.backends.cudnn.allow_tf32 = False
        try:
            h = torch.relu(self.bn1(self.dw(x)))
            return torch.relu(self.bn2(self.pw(h)))
        finally:
            torch.backends.cudnn.allow_tf32 = tf32


def get_inputs():
    return [torch.randn(BATCH, C_IN, H, W)]


def get_init_inputs():
    return []
