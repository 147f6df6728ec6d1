"""MBConv block (as in EfficientNet), fp32, eval mode: 1x1 expand (x4) + BN + SiLU, depthwise 3x3 + BN + SiLU,
squeeze-and-excitation (reduce 4x), 1x1 project + BN, residual add. Input (16, 64, 56, 56).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "conv-block"
DTYPE = "fp32"
TAGS = ('conv', 'depthwise', 'norm', 'block')

BATCH, C, H, W = 16, 64, 56, 56
CPU_SIZES = {"BATCH": 2, "C": 8, "H": 7, "W": 9}


def flops():
    return BATCH * H * W * (2 * C * 4 * C * 2 + 18 * 4 * C + 40 * C)


def bytes_moved():
    return (2 * BATCH * C * H * W + 4 * BATCH * 4 * C * H * W) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        e = 4 * C
        self.expand = nn.Conv2d(C, e, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(e)
        self.dw = nn.Conv2d(e, e, 3, padding=1, groups=e, bias=False)
        self.bn2 = nn.BatchNorm2d(e)
        self.se_reduce = nn.Conv2d(e, C // 4 if C >= 4 else 1, 1)
        self.se_expand = nn.Conv2d(C // 4 if C >= 4 else 1, e, 1)
        self.project = nn.Conv2d(e, C, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(C)
        with torch.no_grad():
            for bn in (self.bn1, self.bn2, self.bn3):
                bn.running_mean.normal_(0, 0.1)
                bn.running_var.uniform_(0.5, 1.5)
        self.eval()

    def forward(self, x):
        # Exact fp32 on GPUs too: cuDNN would otherwise run the convolutions in TF32, and the
        # candidates are held to fp32 accuracy.
        tf32 = torch.backends.cudnn.allow_tf32
        torch.backends.cudnn.allow_tf32 = False
        try:
            h = F.silu(self.bn1(self.expand(x)))
            h = F.silu(self.bn2(self.dw(h)))
            s = torch.sigmoid(self.se_expand(F.silu(self.se_reduce(h.mean((2, 3), keepdim=True)))))
            return x + self.bn3(self.project(h * s))
        finally:
            torch.backends.cudnn.allow_tf32 = tf32


def get_inputs():
    return [torch.randn(BATCH, C, H, W)]


def get_init_inputs():
    return []
