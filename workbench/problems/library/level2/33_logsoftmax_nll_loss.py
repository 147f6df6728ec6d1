"""Log-softmax over classes then negative log-likelihood, mean over rows -> 0-dim fp32 scalar:
F.nll_loss(F.log_softmax(x, dim=1), target), x (8192, 4096) fp32 logits, target (8192,) int64
class indices in [0, 4096). Memory bound: one read of the logits, a global mean.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "loss"
DTYPE = "fp32"
TAGS = ('softmax', 'reduction', 'fused', 'memory-bound')

M, C = 8192, 4096
CPU_SIZES = {"M": 37, "C": 203}


def flops():
    return 4 * M * C + 3 * M  # row max, subtract, exp, sum; per row log, gather, mean


def bytes_moved():
    return M * C * 4 + M * 8 + 4  # read logits and targets, write the scalar


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, target):
        return F.nll_loss(F.log_softmax(x, dim=1), target)


def get_inputs():
    return [torch.randn(M, C) * 2, torch.randint(0, C, (M,))]


def get_init_inputs():
    return []
