"""Pre-norm transformer (ViT) MLP sub-block, bf16: y = x + fc2(gelu_tanh(fc1(LayerNorm(x)))),
LayerNorm(768), fc1 768 -> 3072, fc2 3072 -> 768 (with biases); x (8192, 768), output (8192, 768).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "transformer"
DTYPE = "bf16"
TAGS = ('matmul', 'norm', 'fused', 'block')

TOKENS, EMBED, HIDDEN = 8192, 768, 3072
CPU_SIZES = {"TOKENS": 37, "EMBED": 45, "HIDDEN": 83}


def flops():
    return 4 * TOKENS * EMBED * HIDDEN + TOKENS * (8 * EMBED + 10 * HIDDEN)


def bytes_moved():
    return (2 * TOKENS * EMBED + 2 * EMBED * HIDDEN + HIDDEN + 3 * EMBED) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(EMBED)
        self.fc1 = nn.Linear(EMBED, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, EMBED)
        with torch.no_grad():
            self.norm.weight.normal_(1, 0.1)
            self.norm.bias.normal_(0, 0.1)
        self.to(torch.bfloat16)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x)), approximate="tanh"))


def get_inputs():
    return [torch.randn(TOKENS, EMBED, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
