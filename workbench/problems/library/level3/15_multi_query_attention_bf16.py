"""Multi-query causal self-attention, bf16: q = x Wq + bq (16 heads of 64), one shared key head
k = x Wk + bk and one shared value head v = x Wv + bv (64 each, one fused kv projection), scaled
dot-product attention with a causal mask (written out: matmul, mask, softmax, matmul) where every
query head attends to the same k and v, then the output projection.
x (4, 1024, 1024) -> output (4, 1024, 1024).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "attention"
DTYPE = "bf16"
TAGS = ('attention', 'matmul', 'softmax', 'block')

BATCH, SEQ, EMBED, HEADS, HEAD_DIM = 4, 1024, 1024, 16, 64
CPU_SIZES = {"BATCH": 2, "SEQ": 19, "EMBED": 40, "HEADS": 3, "HEAD_DIM": 16}


def flops():
    # projections (q: EMBED -> HEADS*HEAD_DIM, kv: EMBED -> 2*HEAD_DIM, out: HEADS*HEAD_DIM -> EMBED)
    # plus the two attention matmuls over the full SEQ x SEQ score matrix per head
    inner = HEADS * HEAD_DIM
    proj = 2 * BATCH * SEQ * EMBED * (2 * inner + 2 * HEAD_DIM)
    return proj + 4 * BATCH * HEADS * SEQ * SEQ * HEAD_DIM


def bytes_moved():
    # x read once, output written once, the three weight matrices and their biases (bf16)
    inner = HEADS * HEAD_DIM
    weights = EMBED * inner + EMBED * 2 * HEAD_DIM + inner * EMBED + inner + 2 * HEAD_DIM + EMBED
    return (2 * BATCH * SEQ * EMBED + weights) * 2


class Model(nn.Module):
    def __init__(self, heads, head_dim):
        super().__init__()
        self.heads = heads
        self.head_dim = head_dim
        self.q = nn.Linear(EMBED, heads * head_dim).to(torch.bfloat16)
        self.kv = nn.Linear(EMBED, 2 * head_dim).to(torch.bfloat16)
        self.o = nn.Linear(heads * head_dim, EMBED).to(torch.bfloat16)

    def forward(self, x):
        b, s, e = x.shape
        h, d = self.heads, self.head_dim
        q = self.q(x).view(b, s, h, d).transpose(1, 2)                 # (b, h, s, d)
        k, v = self.kv(x).view(b, s, 2, d).unbind(2)                   # (b, s, d) each, shared by all heads
        att = (q @ k.unsqueeze(1).transpose(-1, -2)) / math.sqrt(d)    # (b, h, s, s)
        mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
        att = torch.softmax(att.float().masked_fill(mask, float("-inf")), dim=-1).to(x.dtype)
        y = (att @ v.unsqueeze(1)).transpose(1, 2).reshape(b, s, h * d)
        return self.o(y)


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED, dtype=torch.bfloat16)]


def get_init_inputs():
    return [HEADS, HEAD_DIM]
