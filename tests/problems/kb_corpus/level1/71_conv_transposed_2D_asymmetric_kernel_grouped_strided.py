import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A grouped, strided transposed 2-D convolution with a rectangular kernel.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple,
                 padding: tuple, groups: int):
        super(Model, self).__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size,
                                                   stride=stride, padding=padding, groups=groups,
                                                   bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, height, width).

        Returns:
            torch.Tensor: Shape (batch_size, out_channels, height_out, width_out).
        """
        return self.conv_transpose2d(x)


batch_size = 16
in_channels = 64
out_channels = 64
kernel_size = (3, 5)
stride = (2, 2)
padding = (1, 2)
groups = 4
height = 128
width = 128


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups]
