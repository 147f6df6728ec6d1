"""Multi-head causal self-attention block, bf16: fused QKV projection, scaled dot-product
attention with a causal mask (written out: matmul, mask, softmax, matmul), output projection.
x (4, 1024, 1024), 16 heads of 64.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "attention"
DTYPE = "bf16"
TAGS = ('attention', 'matmul', 'softmax', 'block')

BATCH, SEQ, EMBED, HEADS = 4, 1024, 1024, 16
CPU_SIZES = {"BATCH": 2, "SEQ": 19, "EMBED": 48, "HEADS": 3}


def flops():
    return BATCH * (8 * SEQ * EMBED * EMBED + 4 * SEQ * SEQ * EMBED)


def bytes_moved():
    return (2 * BATCH * SEQ * EMBED + 4 * EMBED * EMBED) * 2


class Model(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(EMBED, 3 * EMBED).to(torch.bfloat16)
        self.proj = nn.Linear(EMBED, EMBED).to(torch.bfloat16)

    def forward(self, x):
        b, s, e = x.shape
        d = e // self.heads
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
        att = torch.softmax(att.float().masked_fill(mask, float("-inf")), dim=-1).to(x.dtype)
        y = (att @ v).transpose(1, 2).reshape(b, s, e)
        return self.proj(y)


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED, dtype=torch.bfloat16)]


def get_init_inputs():
    return [HEADS]
