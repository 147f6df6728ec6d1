"""Softmax over the last dimension of fp32 scores with a boolean keep-mask: scores (16, 1024, 1024)
fp32 and mask (16, 1024, 1024) torch.bool; y = scores.masked_fill(~mask, -inf).softmax(-1).
The mask is random (p = 0.5) with the diagonal always kept, so no row is fully masked.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "softmax"
DTYPE = "fp32"
TAGS = ('softmax', 'mask', 'fused', 'memory-bound')

BATCH, SEQ = 16, 1024
CPU_SIZES = {"BATCH": 3, "SEQ": 37}


def flops():
    return 5 * BATCH * SEQ * SEQ


def bytes_moved():
    return BATCH * SEQ * SEQ * (4 + 1 + 4)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores, mask):
        return scores.masked_fill(~mask, float("-inf")).softmax(-1)


def get_inputs():
    scores = torch.randn(BATCH, SEQ, SEQ)
    mask = (torch.rand(BATCH, SEQ, SEQ) < 0.5) | torch.eye(SEQ, dtype=torch.bool)
    return [scores, mask]


def get_init_inputs():
    return []
