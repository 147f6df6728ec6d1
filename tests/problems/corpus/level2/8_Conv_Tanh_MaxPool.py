"""Convolution, tanh, 2x2 max pool."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 16
out_channels = 32
height = 128
width = 128

class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return self.pool(torch.tanh(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
