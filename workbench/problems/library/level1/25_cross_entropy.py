"""Mean cross-entropy loss of (4096, 32000) fp32 logits against int64 class targets.
One pass of log-sum-exp per row, then a mean over rows.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "loss"
DTYPE = "fp32"
TAGS = ('reduction', 'memory-bound', 'softmax')

M, V = 4096, 32000
CPU_SIZES = {"M": 27, "V": 211}


def flops():
    return 4 * M * V


def bytes_moved():
    return M * V * 4 + M * 8


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return F.cross_entropy(logits, target)


def get_inputs():
    return [torch.randn(M, V) * 2, torch.randint(0, V, (M,))]


def get_init_inputs():
    return []
