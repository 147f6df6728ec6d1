import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A 2-D convolution with dilation 2, padded to keep the spatial size.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int,
                 dilation: int):
        super(Model, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding,
                                dilation=dilation, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, size, size).

        Returns:
            torch.Tensor: Shape (batch_size, out_channels, size, size).
        """
        return self.conv2d(x)


batch_size = 16
in_channels = 32
out_channels = 64
kernel_size = 3
size = 256
padding = 2
dilation = 2


def get_inputs():
    x = torch.randn(batch_size, in_channels, size, size)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, dilation]
