import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution, 2-D max pooling, sigmoid, then a sum over channels and space per sample.
    """

    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.max_pool = nn.MaxPool2d(kernel_size=pool_kernel_size)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, height, width).

        Returns:
            torch.Tensor: Shape (batch_size,).
        """
        x = self.conv(x)
        x = self.max_pool(x)
        x = torch.sigmoid(x)
        x = torch.sum(x, dim=[1, 2, 3])
        return x


batch_size = 32
in_channels = 32
out_channels = 64
height, width = 128, 128
kernel_size = 3
pool_kernel_size = 2


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel_size]
