import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Convolution followed by Mish written out: x * tanh(softplus(x)).
    """

    def __init__(self, in_channels, out_channels, kernel_size):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = self.conv(x)
        return x * torch.tanh(F.softplus(x))


batch_size = 32
in_channels = 32
out_channels = 64
height = width = 128
kernel_size = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
