"""One LSTM cell step, fp32, written as explicit gate math: gates = x W_ih^T + b_ih + h W_hh^T + b_hh
split into (i, f, g, o); c' = sigmoid(f) * c + sigmoid(i) * tanh(g); h' = sigmoid(o) * tanh(c').
x (4096, 512), h and c (4096, 1024); returns (h', c'), each (4096, 1024).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "recurrent"
DTYPE = "fp32"
TAGS = ('recurrence', 'matmul', 'block')

BATCH, IN, HIDDEN = 4096, 512, 1024
CPU_SIZES = {"BATCH": 13, "IN": 11, "HIDDEN": 21}


def flops():
    return 2 * BATCH * 4 * HIDDEN * (IN + HIDDEN) + 12 * BATCH * HIDDEN


def bytes_moved():
    return (BATCH * IN + 4 * BATCH * HIDDEN + 4 * HIDDEN * (IN + HIDDEN) + 8 * HIDDEN) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ih = nn.Linear(IN, 4 * HIDDEN)
        self.hh = nn.Linear(HIDDEN, 4 * HIDDEN)

    def forward(self, x, h, c):
        gates = self.ih(x) + self.hh(h)
        i, f, g, o = gates.chunk(4, 1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        return h_new, c_new


def get_inputs():
    return [torch.randn(BATCH, IN), torch.randn(BATCH, HIDDEN), torch.randn(BATCH, HIDDEN)]


def get_init_inputs():
    return []
