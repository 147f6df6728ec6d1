import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A 3-D convolution whose kernel has a different extent along each axis.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, bias: bool = False):
        """
        Args:
            in_channels (int): Channels of the input volume.
            out_channels (int): Channels produced.
            kernel_size (tuple): (kernel_d, kernel_h, kernel_w).
            bias (bool): Whether to add a learnable bias.
        """
        super(Model, self).__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, kernel_size, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, depth, height, width).

        Returns:
            torch.Tensor: Shape (batch_size, out_channels, depth_out, height_out, width_out).
        """
        return self.conv3d(x)


batch_size = 8
in_channels = 8
out_channels = 16
kernel_size = (3, 5, 7)
depth = 48
height = 64
width = 96


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
