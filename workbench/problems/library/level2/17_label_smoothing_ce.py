"""Cross-entropy with label smoothing 0.1 over (4096, 32000) fp32 logits, mean over rows.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "loss"
DTYPE = "fp32"
TAGS = ('softmax', 'reduction', 'fused', 'memory-bound')

M, V = 4096, 32000
CPU_SIZES = {"M": 19, "V": 173}


def flops():
    return 5 * M * V


def bytes_moved():
    return M * V * 4 + M * 8


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return F.cross_entropy(logits, target, label_smoothing=0.1)


def get_inputs():
    return [torch.randn(M, V) * 2, torch.randint(0, V, (M,))]


def get_init_inputs():
    return []
