import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Dilated convolution, group normalisation, and the mean over channels and space.
    """

    def __init__(self, in_channels, out_channels, kernel_size, dilation, num_groups):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, dilation=dilation,
                              padding=dilation * (kernel_size // 2))
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, height, width).

        Returns:
            torch.Tensor: Shape (batch_size,).
        """
        x = self.conv(x)
        x = self.group_norm(x)
        return x.mean(dim=[1, 2, 3])


batch_size = 32
in_channels = 32
out_channels = 64
height = width = 128
kernel_size = 3
dilation = 3
num_groups = 8


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, dilation, num_groups]
