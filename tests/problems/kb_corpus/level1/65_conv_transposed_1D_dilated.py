import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A transposed 1-D convolution with a dilated kernel.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, dilation: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv1d_transpose = nn.ConvTranspose1d(in_channels, out_channels, kernel_size,
                                                   stride=stride, padding=padding,
                                                   dilation=dilation, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, length).

        Returns:
            torch.Tensor: Shape (batch_size, out_channels, length_out).
        """
        return self.conv1d_transpose(x)


batch_size = 32
in_channels = 32
out_channels = 64
kernel_size = 5
length = 32768
stride = 1
padding = 0
dilation = 3


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
