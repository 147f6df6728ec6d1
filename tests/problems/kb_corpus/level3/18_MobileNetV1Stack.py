import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A MobileNet-v1 style stem and stack of depthwise-separable blocks
    (depthwise 3x3-bn-relu, pointwise 1x1-bn-relu), then a classifier.
    """

    def __init__(self, num_classes, width, input_channels=3):
        super(Model, self).__init__()

        def conv_bn(inp, oup, stride):
            return nn.Sequential(nn.Conv2d(inp, oup, 3, stride, 1, bias=False),
                                 nn.BatchNorm2d(oup), nn.ReLU(inplace=True))

        def conv_dw(inp, oup, stride):
            return nn.Sequential(
                nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False),
                nn.BatchNorm2d(inp), nn.ReLU(inplace=True),
                nn.Conv2d(inp, oup, 1, 1, 0, bias=False),
                nn.BatchNorm2d(oup), nn.ReLU(inplace=True))

        self.model = nn.Sequential(
            conv_bn(input_channels, width, 2),
            conv_dw(width, width * 2, 1),
            conv_dw(width * 2, width * 4, 2),
            conv_dw(width * 4, width * 4, 1),
            conv_dw(width * 4, width * 8, 2),
            conv_dw(width * 8, width * 8, 1),
            conv_dw(width * 8, width * 16, 2),
            nn.AdaptiveAvgPool2d(1),
        )
        self.fc = nn.Linear(width * 16, num_classes)

    def forward(self, x):
        x = self.model(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)


batch_size = 16
input_channels = 3
image_size = 224
width = 32
num_classes = 1000


def get_inputs():
    return [torch.randn(batch_size, input_channels, image_size, image_size)]


def get_init_inputs():
    return [num_classes, width, input_channels]
