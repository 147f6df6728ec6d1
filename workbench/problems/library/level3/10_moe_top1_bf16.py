"""Mixture of experts with top-1 routing, bf16: a router picks one of 8 experts per token
(argmax of router logits), each expert is a GELU MLP (1024 -> 2048 -> 1024), the output is scaled by
the router probability. 8192 tokens. The reference loops over experts with index masks.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "moe"
DTYPE = "bf16"
TAGS = ('matmul', 'gather', 'routing', 'block')

TOKENS, EMBED, HIDDEN, EXPERTS = 8192, 1024, 2048, 8
CPU_SIZES = {"TOKENS": 37, "EMBED": 16, "HIDDEN": 24, "EXPERTS": 3}


def flops():
    return 4 * TOKENS * EMBED * HIDDEN + 2 * TOKENS * EMBED * EXPERTS


def bytes_moved():
    return (2 * TOKENS * EMBED + 2 * EXPERTS * EMBED * HIDDEN) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(EMBED, EXPERTS, bias=False).to(torch.bfloat16)
        self.w_in = nn.Parameter(torch.randn(EXPERTS, HIDDEN, EMBED, dtype=torch.bfloat16) / math.sqrt(EMBED))
        self.w_out = nn.Parameter(torch.randn(EXPERTS, EMBED, HIDDEN, dtype=torch.bfloat16) / math.sqrt(HIDDEN))

    def forward(self, x):
        probs = torch.softmax(self.router(x).float(), dim=-1)
        p, idx = probs.max(dim=-1)
        out = torch.zeros_like(x)
        for e in range(self.w_in.shape[0]):
            sel = (idx == e).nonzero(as_tuple=True)[0]
            if sel.numel() == 0:
                continue
            h = F.gelu(x[sel] @ self.w_in[e].t(), approximate="tanh")
            out[sel] = ((h @ self.w_out[e].t()).float() * p[sel, None]).to(x.dtype)
        return out


def get_inputs():
    return [torch.randn(TOKENS, EMBED, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
