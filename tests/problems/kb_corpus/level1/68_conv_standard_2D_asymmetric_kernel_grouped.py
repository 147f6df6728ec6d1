import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A grouped 2-D convolution with a rectangular (3 x 5) kernel.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, padding: tuple,
                 groups: int):
        super(Model, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding,
                                groups=groups, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, height, width).

        Returns:
            torch.Tensor: Shape (batch_size, out_channels, height, width).
        """
        return self.conv2d(x)


batch_size = 16
in_channels = 64
out_channels = 128
groups = 4
kernel_size = (3, 5)
padding = (1, 2)
height = 192
width = 256


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, groups]
