"""Pre-norm transformer block, bf16: x + attn(rmsnorm(x)), then + mlp(rmsnorm(.)) with a GELU MLP
(4x width). Causal attention with 8 heads; x (4, 512, 1024).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "transformer"
DTYPE = "bf16"
TAGS = ('attention', 'matmul', 'norm', 'block')

BATCH, SEQ, EMBED, HEADS = 4, 512, 1024, 8
CPU_SIZES = {"BATCH": 2, "SEQ": 11, "EMBED": 32, "HEADS": 2}


def flops():
    return BATCH * (24 * SEQ * EMBED * EMBED + 4 * SEQ * SEQ * EMBED)


def bytes_moved():
    return (2 * BATCH * SEQ * EMBED + 12 * EMBED * EMBED) * 2


class Model(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.heads = heads
        self.n1 = nn.Parameter(torch.ones(EMBED, dtype=torch.bfloat16))
        self.n2 = nn.Parameter(torch.ones(EMBED, dtype=torch.bfloat16))
        self.qkv = nn.Linear(EMBED, 3 * EMBED, bias=False).to(torch.bfloat16)
        self.proj = nn.Linear(EMBED, EMBED, bias=False).to(torch.bfloat16)
        self.up = nn.Linear(EMBED, 4 * EMBED, bias=False).to(torch.bfloat16)
        self.down = nn.Linear(4 * EMBED, EMBED, bias=False).to(torch.bfloat16)

    @staticmethod
    def _rms(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w

    def forward(self, x):
        b, s, e = x.shape
        d = e // self.heads
        q, k, v = self.qkv(self._rms(x, self.n1)).view(b, s, 3, self.heads, d).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
        att = torch.softmax(att.float().masked_fill(mask, float("-inf")), dim=-1).to(x.dtype)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, s, e))
        return x + self.down(F.gelu(self.up(self._rms(x, self.n2)), approximate="tanh"))


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED, dtype=torch.bfloat16)]


def get_init_inputs():
    return [HEADS]
