"""1-D convolution with bias, fp32: input (32, 128, 4096), 128 output channels, kernel size 5,
stride 1, padding 2 (output length 4096). Exact fp32 (no TF32).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "conv"
DTYPE = "fp32"
TAGS = ('conv', 'compute-bound')

BATCH, C_IN, C_OUT, L = 32, 128, 128, 4096
KSIZE, PAD = 5, 2
CPU_SIZES = {"BATCH": 2, "C_IN": 5, "C_OUT": 7, "L": 37}


def flops():
    return 2 * BATCH * C_OUT * L * C_IN * KSIZE + BATCH * C_OUT * L


def bytes_moved():
    return (BATCH * C_IN * L + BATCH * C_OUT * L + C_OUT * C_IN * KSIZE + C_OUT) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(C_IN, C_OUT, KSIZE, padding=PAD, bias=True)

    def forward(self, x):
        # Exact fp32 on GPUs too: cuDNN would otherwise run the convolution in TF32, and the
        # candidates are held to fp32 accuracy.
        tf32 = torch.backends.cudnn.allow_tf32
        torch.backends.cudnn.allow_tf32 = False
        try:
            return self.conv(x)
        finally:
            torch.backends.cudnn.allow_tf32 = tf32


def get_inputs():
    return [torch.randn(BATCH, C_IN, L)]


def get_init_inputs():
    return []
