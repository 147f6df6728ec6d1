import torch
import torch.nn as nn


class Model(nn.Module):
    """
    3-D convolution, 3-D average pooling, then softmax across channels (dim 1 of five).
    """

    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super(Model, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.pool = nn.AvgPool3d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = self.pool(x)
        x = torch.softmax(x, dim=1)
        return x


batch_size = 16
in_channels = 8
out_channels = 32
depth, height, width = 34, 66, 66
kernel_size = 3
pool_kernel_size = 2


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel_size]
