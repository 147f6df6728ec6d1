import torch
import torch.nn as nn


class Model(nn.Module):
    """
    2-D average pooling with the stride equal to the window (non-overlapping).
    """

    def __init__(self, kernel_size: int):
        super(Model, self).__init__()
        self.avg_pool = nn.AvgPool2d(kernel_size=kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, channels, size, size).

        Returns:
            torch.Tensor: Shape (batch_size, channels, size // kernel_size, size // kernel_size).
        """
        return self.avg_pool(x)


batch_size = 16
channels = 64
size = 384
kernel_size = 3


def get_inputs():
    x = torch.randn(batch_size, channels, size, size)
    return [x]


def get_init_inputs():
    return [kernel_size]
