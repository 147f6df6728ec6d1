import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    1-D convolution, GELU, 1-D average pooling.
    """

    def __init__(self, in_channels, out_channels, kernel_size, pool_size):
        super(Model, self).__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)
        self.pool = nn.AvgPool1d(pool_size, stride=pool_size)

    def forward(self, x):
        x = self.conv(x)
        x = F.gelu(x)
        x = self.pool(x)
        return x


batch_size = 64
in_channels = 32
out_channels = 64
length = 16384
kernel_size = 3
pool_size = 2


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_size]
