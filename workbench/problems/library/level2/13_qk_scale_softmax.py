"""Attention probabilities, fp32: softmax(Q @ K^T / sqrt(d)) with Q, K of shape (8, 8, 1024, 64).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "attention"
DTYPE = "fp32"
TAGS = ('matmul', 'softmax', 'fused')

BATCH, HEADS, SEQ, DHEAD = 8, 8, 1024, 64
CPU_SIZES = {"BATCH": 2, "HEADS": 2, "SEQ": 29, "DHEAD": 16}


def flops():
    return 2 * BATCH * HEADS * SEQ * SEQ * DHEAD + 5 * BATCH * HEADS * SEQ * SEQ


def bytes_moved():
    return (2 * BATCH * HEADS * SEQ * DHEAD + BATCH * HEADS * SEQ * SEQ) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k):
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1)


def get_inputs():
    return [torch.randn(BATCH, HEADS, SEQ, DHEAD), torch.randn(BATCH, HEADS, SEQ, DHEAD)]


def get_init_inputs():
    return []
