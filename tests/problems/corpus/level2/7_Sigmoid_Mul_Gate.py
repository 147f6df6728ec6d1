"""Gated activation: a * sigmoid(b)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
dim = 65536

class Model(nn.Module):
    def forward(self, a, b):
        return a * torch.sigmoid(b)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
