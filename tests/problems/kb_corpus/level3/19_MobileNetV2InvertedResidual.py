import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A MobileNet-v2 inverted residual block: 1x1 expansion, depthwise 3x3, 1x1 linear
    projection, identity shortcut.
    """

    def __init__(self, channels, expand_ratio):
        super(Model, self).__init__()
        hidden = channels * expand_ratio
        self.block = nn.Sequential(
            nn.Conv2d(channels, hidden, 1, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, channels, 1, bias=False),
            nn.BatchNorm2d(channels),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, channels, size, size).

        Returns:
            torch.Tensor: Same shape.
        """
        return x + self.block(x)


batch_size = 32
channels = 32
expand_ratio = 6
size = 112


def get_inputs():
    return [torch.randn(batch_size, channels, size, size)]


def get_init_inputs():
    return [channels, expand_ratio]
