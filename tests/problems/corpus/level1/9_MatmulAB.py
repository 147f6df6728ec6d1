"""Rectangular matrix product."""
import torch
import torch.nn as nn
import torch.nn.functional as F

m = 2048
k = 4096
n = 1024

class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
