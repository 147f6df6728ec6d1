import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A standard 2-D convolution with a square kernel over a square input.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, bias: bool = False):
        """
        Args:
            in_channels (int): Channels of the input.
            out_channels (int): Channels produced.
            kernel_size (int): Side of the square kernel.
            stride (int): Stride of the convolution.
            padding (int): Zero padding on every side.
            bias (bool): Whether to add a learnable bias.
        """
        super(Model, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size),
                                stride=stride, padding=padding, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, size, size).

        Returns:
            torch.Tensor: Shape (batch_size, out_channels, size_out, size_out).
        """
        return self.conv2d(x)


batch_size = 16
in_channels = 64
out_channels = 128
kernel_size = 3
size = 128


def get_inputs():
    x = torch.randn(batch_size, in_channels, size, size)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, 1, 1]
