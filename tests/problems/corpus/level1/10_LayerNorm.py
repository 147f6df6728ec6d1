"""Layer norm with affine parameters."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
features = 2048

class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.norm = nn.LayerNorm(features)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]
