"""Pre-norm MLP sub-block with a residual, fp16: y = x + fc2(gelu(fc1(LayerNorm(x)))), exact (erf)
GELU, LayerNorm(1024) with affine weights, fc1 1024 -> 4096, fc2 4096 -> 1024 (with biases);
x (4096, 1024), output (4096, 1024); the whole model (weights, inputs, output) in fp16.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "mlp"
DTYPE = "fp16"
TAGS = ('matmul', 'norm', 'fused', 'block')

TOKENS, EMBED, HIDDEN = 4096, 1024, 4096
CPU_SIZES = {"TOKENS": 41, "EMBED": 52, "HIDDEN": 75}


def flops():
    # two GEMMs (2*M*N*K each), LayerNorm (~8 per input element), bias + erf GELU (~10 per hidden
    # element), fc2 bias and the residual add (2 per output element)
    return 4 * TOKENS * EMBED * HIDDEN + TOKENS * (8 * EMBED + 10 * HIDDEN + 2 * EMBED)


def bytes_moved():
    # x read, y written, both weight matrices, the biases and the LayerNorm weight and bias (fp16)
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
        self.half()

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


def get_inputs():
    return [torch.randn(TOKENS, EMBED, dtype=torch.float16)]


def get_init_inputs():
    return []
