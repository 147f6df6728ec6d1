"""Embedding lookup: gather 131072 rows of a (65536, 1024) fp32 table by int64 index.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "gather"
DTYPE = "fp32"
TAGS = ('gather', 'memory-bound')

VOCAB, DIM, TOKENS = 65536, 1024, 131072
CPU_SIZES = {"VOCAB": 97, "DIM": 60, "TOKENS": 211}


def flops():
    return 0


def bytes_moved():
    return 2 * TOKENS * DIM * 4 + TOKENS * 8


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)

    def forward(self, idx):
        return self.emb(idx)


def get_inputs():
    return [torch.randint(0, VOCAB, (TOKENS,))]


def get_init_inputs():
    return []
