"""KL-divergence loss F.kl_div(log_q, p, reduction="batchmean") of fp32 (4096, 8192) inputs ->
0-dim fp32 scalar: sum(p * (log p - log_q)) / 4096. log_q is a log_softmax and p a softmax of
random rows (built in get_inputs). Memory bound: one read of each input, a global sum.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "loss"
DTYPE = "fp32"
TAGS = ('loss', 'reduction', 'memory-bound')

B, N = 4096, 8192
CPU_SIZES = {"B": 19, "N": 531}


def flops():
    return 4 * B * N  # log p, subtract, multiply, sum


def bytes_moved():
    return 2 * B * N * 4 + 4  # read log_q and p once, write the scalar


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_q, p):
        return F.kl_div(log_q, p, reduction="batchmean")


def get_inputs():
    log_q = torch.log_softmax(torch.randn(B, N), dim=1)
    p = torch.softmax(torch.randn(B, N), dim=1)
    return [log_q, p]


def get_init_inputs():
    return []
