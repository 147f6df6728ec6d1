import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A plain 1-D convolution (no stride, no padding).
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, bias: bool = False):
        super(Model, self).__init__()
        self.conv1d = nn.Conv1d(in_channels, out_channels, kernel_size, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, length).

        Returns:
            torch.Tensor: Shape (batch_size, out_channels, length - kernel_size + 1).
        """
        return self.conv1d(x)


batch_size = 64
in_channels = 32
out_channels = 64
kernel_size = 7
length = 32768


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
