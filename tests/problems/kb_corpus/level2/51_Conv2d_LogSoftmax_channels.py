import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Per-pixel class log-probabilities: a 3x3 convolution to class scores, log-softmax over
    the class (channel) dimension of the 4-D result.
    """

    def __init__(self, in_channels, num_classes):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, num_classes, kernel_size=3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, height, width).

        Returns:
            torch.Tensor: Shape (batch_size, num_classes, height, width).
        """
        return torch.log_softmax(self.conv(x), dim=1)


batch_size = 16
in_channels = 64
num_classes = 32
height = width = 256


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, num_classes]
