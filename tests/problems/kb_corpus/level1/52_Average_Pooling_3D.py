import torch
import torch.nn as nn


class Model(nn.Module):
    """
    3-D average pooling with overlapping windows.
    """

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super(Model, self).__init__()
        self.avg_pool = nn.AvgPool3d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, channels, depth, height, width).

        Returns:
            torch.Tensor: Pooled volume.
        """
        return self.avg_pool(x)


batch_size = 8
channels = 32
depth = 64
height = 64
width = 64
kernel_size = 3
stride = 2
padding = 1


def get_inputs():
    x = torch.randn(batch_size, channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
