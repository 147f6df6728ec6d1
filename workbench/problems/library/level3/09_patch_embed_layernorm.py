"""Vision patch embedding then LayerNorm, fp32: a 16x16/stride-16 convolution turns images
(64, 3, 224, 224) into 196 tokens of width 768, flattened to (64, 196, 768), then LayerNorm.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "conv-block"
DTYPE = "fp32"
TAGS = ('conv', 'norm', 'block')

BATCH, IMG, PATCH, EMBED = 64, 224, 16, 768
CPU_SIZES = {"BATCH": 2, "IMG": 12, "PATCH": 4, "EMBED": 20}


def flops():
    return 2 * BATCH * (IMG // PATCH) ** 2 * EMBED * 3 * PATCH * PATCH + 8 * BATCH * (IMG // PATCH) ** 2 * EMBED


def bytes_moved():
    return (BATCH * 3 * IMG * IMG + BATCH * (IMG // PATCH) ** 2 * EMBED + EMBED * 3 * PATCH * PATCH) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(3, EMBED, PATCH, stride=PATCH)
        self.ln = nn.LayerNorm(EMBED)

    def forward(self, img):
        # Exact fp32 on GPUs too: cuDNN would otherwise run the convolutions in TF32, and the
        # candidates are held to fp32 accuracy.
        tf32 = torch.backends.cudnn.allow_tf32
        torch.backends.cudnn.allow_tf32 = False
        try:
            return self.ln(self.proj(img).flatten(2).transpose(1, 2))
        finally:
            torch.backends.cudnn.allow_tf32 = tf32


def get_inputs():
    return [torch.randn(BATCH, 3, IMG, IMG)]


def get_init_inputs():
    return []
