import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Depthwise 3x3 convolution, batch normalisation, ReLU6 (as in mobile networks).
    """

    def __init__(self, channels, stride):
        super(Model, self).__init__()
        self.dw = nn.Conv2d(channels, channels, 3, stride=stride, padding=1, groups=channels,
                            bias=False)
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return torch.clamp(self.bn(self.dw(x)), 0.0, 6.0)


batch_size = 32
channels = 128
height = width = 112
stride = 1


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, stride]
