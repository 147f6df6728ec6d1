"""Mean over dim 1."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
rows = 512
cols = 256

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, rows, cols)]


def get_init_inputs():
    return []
