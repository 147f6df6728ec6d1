import torch
import torch.nn as nn


class BasicBlock(nn.Module):
    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, stride, bias=False),
                                          nn.BatchNorm2d(out_channels))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + self.shortcut(x))


class Model(nn.Module):
    """
    A CIFAR-sized residual network: a stem, three stages of two basic blocks, global pooling,
    a linear classifier.
    """

    def __init__(self, base_width, num_classes):
        super(Model, self).__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, base_width, 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(base_width), nn.ReLU())
        blocks = []
        current = base_width
        for i, width in enumerate([base_width, base_width * 2, base_width * 4]):
            stride = 1 if i == 0 else 2
            blocks += [BasicBlock(current, width, stride), BasicBlock(width, width, 1)]
            current = width
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(current, num_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = torch.mean(x, dim=[2, 3])
        return self.fc(x)


batch_size = 64
image_size = 32
base_width = 32
num_classes = 10


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [base_width, num_classes]
