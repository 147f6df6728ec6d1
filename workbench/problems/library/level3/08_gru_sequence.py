"""A GRU layer unrolled over time, fp32, written as explicit gate math: 64 steps, batch 64,
input 512, hidden 1024; returns all hidden states (64, 64, 1024).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "recurrent"
DTYPE = "fp32"
TAGS = ('recurrence', 'matmul', 'block')

STEPS, BATCH, IN, HIDDEN = 64, 64, 512, 1024
CPU_SIZES = {"STEPS": 5, "BATCH": 3, "IN": 10, "HIDDEN": 14}


def flops():
    return STEPS * BATCH * (6 * IN * HIDDEN + 6 * HIDDEN * HIDDEN + 12 * HIDDEN)


def bytes_moved():
    return (STEPS * BATCH * (IN + HIDDEN) + 3 * HIDDEN * (IN + HIDDEN)) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ih = nn.Linear(IN, 3 * HIDDEN)
        self.hh = nn.Linear(HIDDEN, 3 * HIDDEN)

    def forward(self, x):
        h = x.new_zeros(x.shape[1], self.hh.in_features)
        gi_all = self.ih(x)
        outs = []
        for t in range(x.shape[0]):
            r_i, z_i, n_i = gi_all[t].chunk(3, dim=-1)
            r_h, z_h, n_h = self.hh(h).chunk(3, dim=-1)
            r = torch.sigmoid(r_i + r_h)
            z = torch.sigmoid(z_i + z_h)
            n = torch.tanh(n_i + r * n_h)
            h = (1 - z) * n + z * h
            outs.append(h)
        return torch.stack(outs)


def get_inputs():
    return [torch.randn(STEPS, BATCH, IN)]


def get_init_inputs():
    return []
