"""Multi-head cross-attention, bf16: queries from x (8, 512, 768), keys and values from a context
(8, 1024, 768), 12 heads, no mask; projections with bias, output projection.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "attention"
DTYPE = "bf16"
TAGS = ('attention', 'matmul', 'softmax', 'block')

BATCH, SQ, SK, EMBED, HEADS = 8, 512, 1024, 768, 12
CPU_SIZES = {"BATCH": 2, "SQ": 7, "SK": 11, "EMBED": 32, "HEADS": 2}


def flops():
    return BATCH * (4 * SQ * EMBED * EMBED + 4 * SK * EMBED * EMBED + 4 * SQ * SK * EMBED)


def bytes_moved():
    return (2 * BATCH * SQ * EMBED + BATCH * SK * EMBED + 4 * EMBED * EMBED) * 2


class Model(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(EMBED, EMBED).to(torch.bfloat16)
        self.kv = nn.Linear(EMBED, 2 * EMBED).to(torch.bfloat16)
        self.o = nn.Linear(EMBED, EMBED).to(torch.bfloat16)

    def forward(self, x, ctx):
        b, sq, e = x.shape
        sk = ctx.shape[1]
        d = e // self.heads
        q = self.q(x).view(b, sq, self.heads, d).transpose(1, 2)
        k, v = self.kv(ctx).view(b, sk, 2, self.heads, d).permute(2, 0, 3, 1, 4)
        att = torch.softmax(((q @ k.transpose(-1, -2)) / math.sqrt(d)).float(), dim=-1).to(x.dtype)
        return self.o((att @ v).transpose(1, 2).reshape(b, sq, e))


def get_inputs():
    return [torch.randn(BATCH, SQ, EMBED, dtype=torch.bfloat16), torch.randn(BATCH, SK, EMBED, dtype=torch.bfloat16)]


def get_init_inputs():
    return [HEADS]
