"""BatchNorm2d in eval mode then ReLU, fp32, on (32, 128, 112, 112). Memory bound.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "norm"
DTYPE = "fp32"
TAGS = ('norm', 'activation', 'fused', 'memory-bound')

BATCH, C, H, W = 32, 128, 112, 112
CPU_SIZES = {"BATCH": 2, "C": 5, "H": 7, "W": 9}


def flops():
    return 4 * BATCH * C * H * W


def bytes_moved():
    return (2 * BATCH * C * H * W + 4 * C) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(C)
        with torch.no_grad():
            self.bn.running_mean.normal_(0, 0.2)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.normal_(1, 0.1)
            self.bn.bias.normal_(0, 0.1)
        self.eval()

    def forward(self, x):
        return torch.relu(self.bn(x))


def get_inputs():
    return [torch.randn(BATCH, C, H, W)]


def get_init_inputs():
    return []
