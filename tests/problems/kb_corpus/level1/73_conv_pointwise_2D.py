import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A pointwise (1x1) 2-D convolution: a per-pixel channel mix.
    """

    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super(Model, self).__init__()
        self.conv1d = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, height, width).

        Returns:
            torch.Tensor: Shape (batch_size, out_channels, height, width).
        """
        return self.conv1d(x)


batch_size = 16
in_channels = 64
out_channels = 128
height = 256
width = 256


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels]
