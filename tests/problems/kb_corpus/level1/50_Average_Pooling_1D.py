import torch
import torch.nn as nn


class Model(nn.Module):
    """
    1-D average pooling.
    """

    def __init__(self, kernel_size: int, stride: int = 1, padding: int = 0):
        super(Model, self).__init__()
        self.avg_pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, input_length).

        Returns:
            torch.Tensor: Shape (batch_size, in_channels, output_length).
        """
        return self.avg_pool(x)


batch_size = 64
in_channels = 64
input_length = 16384
kernel_size = 8
stride = 2
padding = 3


def get_inputs():
    x = torch.randn(batch_size, in_channels, input_length)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
