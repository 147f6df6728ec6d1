import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A depthwise 2-D convolution: one filter per channel (groups = channels).
    """

    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 bias: bool = False):
        super(Model, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride,
                                padding=padding, groups=in_channels, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, size, size).

        Returns:
            torch.Tensor: Shape (batch_size, in_channels, size_out, size_out).
        """
        return self.conv2d(x)


batch_size = 16
in_channels = 64
kernel_size = 3
size = 256
stride = 1
padding = 1


def get_inputs():
    x = torch.randn(batch_size, in_channels, size, size)
    return [x]


def get_init_inputs():
    return [in_channels, kernel_size, stride, padding]
