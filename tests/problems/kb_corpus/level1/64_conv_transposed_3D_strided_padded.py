import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A transposed 3-D convolution that doubles every spatial extent (stride 2, padding 1,
    output padding 1).
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int,
                 padding: int, output_padding: int):
        super(Model, self).__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(in_channels, out_channels, kernel_size,
                                                   stride=stride, padding=padding,
                                                   output_padding=output_padding, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, depth, height, width).

        Returns:
            torch.Tensor: Shape (batch_size, out_channels, 2 * depth, 2 * height, 2 * width).
        """
        return self.conv_transpose3d(x)


batch_size = 8
in_channels = 32
out_channels = 16
kernel_size = 3
depth = 32
height = 32
width = 32
stride = 2
padding = 1
output_padding = 1


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]
