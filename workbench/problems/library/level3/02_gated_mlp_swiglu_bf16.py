"""Gated MLP (SwiGLU) of a transformer, bf16: y = (silu(x W1^T) * (x W3^T)) W2^T, tokens 4096,
model width 2048, hidden width 5632, no biases.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "mlp"
DTYPE = "bf16"
TAGS = ('matmul', 'gated', 'block')

TOKENS, EMBED, HIDDEN = 4096, 2048, 5632
CPU_SIZES = {"TOKENS": 23, "EMBED": 40, "HIDDEN": 72}


def flops():
    return 6 * TOKENS * EMBED * HIDDEN


def bytes_moved():
    return (2 * TOKENS * EMBED + 3 * EMBED * HIDDEN) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(EMBED, HIDDEN, bias=False).to(torch.bfloat16)
        self.w3 = nn.Linear(EMBED, HIDDEN, bias=False).to(torch.bfloat16)
        self.w2 = nn.Linear(HIDDEN, EMBED, bias=False).to(torch.bfloat16)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def get_inputs():
    return [torch.randn(TOKENS, EMBED, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
