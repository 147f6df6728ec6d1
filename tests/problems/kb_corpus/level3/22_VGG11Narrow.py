import torch
import torch.nn as nn


class Model(nn.Module):
    """
    The VGG-11 layer pattern at reduced width: 3x3 convolutions with ReLU, max pooling between
    stages ("M" in the configuration list), and a classifier.
    """

    def __init__(self, config, num_classes):
        """
        Args:
            config (list): Output channels of each convolution, "M" for a 2x2 max pool.
            num_classes (int): Classes.
        """
        super(Model, self).__init__()
        layers = []
        in_channels = 3
        for item in config:
            if item == "M":
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            else:
                layers += [nn.Conv2d(in_channels, item, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
                in_channels = item
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Linear(in_channels, 512), nn.ReLU(inplace=True),
                                        nn.Linear(512, num_classes))

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (batch_size, 3, image_size, image_size).

        Returns:
            torch.Tensor: Shape (batch_size, num_classes).
        """
        x = self.features(x)
        x = torch.flatten(torch.mean(x, dim=[2, 3]), 1)
        return self.classifier(x)


batch_size = 32
image_size = 64
config = [32, "M", 64, "M", 128, 128, "M", 256, 256, "M", 256, 256, "M"]
num_classes = 200


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [config, num_classes]
