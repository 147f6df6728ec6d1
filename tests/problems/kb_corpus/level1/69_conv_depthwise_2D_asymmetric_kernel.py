import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A depthwise convolution with a (kernel_size x 1) kernel: a vertical filter per channel.
    """

    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0):
        super(Model, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size=(kernel_size, 1),
                                stride=stride, padding=(padding, 0), groups=in_channels,
                                bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, height, width).

        Returns:
            torch.Tensor: Shape (batch_size, in_channels, height_out, width).
        """
        return self.conv2d(x)


batch_size = 16
in_channels = 64
kernel_size = 7
height = 256
width = 256
stride = 1
padding = 3


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, kernel_size, stride, padding]
