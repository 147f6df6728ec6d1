import torch
import torch.nn as nn


class Model(nn.Module):
    """
    1-D convolution, 1-D max pooling, tanh.
    """

    def __init__(self, in_channels, out_channels, kernel_size, pool_size):
        super(Model, self).__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.MaxPool1d(pool_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, length).

        Returns:
            torch.Tensor: Shape (batch_size, out_channels, length // pool_size).
        """
        return torch.tanh(self.pool(self.conv(x)))


batch_size = 64
in_channels = 32
out_channels = 64
length = 16384
kernel_size = 5
pool_size = 4


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_size]
