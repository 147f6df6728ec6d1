import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A transposed 2-D convolution with a square kernel.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, output_padding: int = 0, bias: bool = False):
        super(Model, self).__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size,
                                                   stride=stride, padding=padding,
                                                   output_padding=output_padding, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, size, size).

        Returns:
            torch.Tensor: Shape (batch_size, out_channels, size_out, size_out).
        """
        return self.conv_transpose2d(x)


batch_size = 16
in_channels = 64
out_channels = 32
kernel_size = 3
size = 128


def get_inputs():
    x = torch.randn(batch_size, in_channels, size, size)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
