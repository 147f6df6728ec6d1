import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Convolution, 2-D average pooling, then a hard-sigmoid gate multiplied back onto the
    pooled features.
    """

    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.avg_pool = nn.AvgPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.avg_pool(self.conv(x))
        return x * F.hardsigmoid(x)


batch_size = 32
in_channels = 32
out_channels = 64
height = width = 128
kernel_size = 3
pool_kernel_size = 2


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel_size]
