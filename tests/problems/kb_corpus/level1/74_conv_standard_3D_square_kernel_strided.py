import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A 3-D convolution with a cubic kernel and stride 2.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int,
                 padding: int):
        super(Model, self).__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride,
                                padding=padding, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, depth, height, width).

        Returns:
            torch.Tensor: Shape (batch_size, out_channels, depth / 2, height / 2, width / 2).
        """
        return self.conv3d(x)


batch_size = 8
in_channels = 16
out_channels = 32
kernel_size = 3
depth = 64
height = 128
width = 128
stride = 2
padding = 1


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
