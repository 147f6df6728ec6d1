import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A small VGG: stages of 3x3 conv + ReLU pairs, each followed by 2x2 max pooling, then a
    two-layer classifier.
    """

    def __init__(self, stage_channels, num_classes):
        """
        Args:
            stage_channels (list): Output channels of each stage.
            num_classes (int): Classes.
        """
        super(Model, self).__init__()
        layers = []
        current = 3
        for channels in stage_channels:
            layers += [nn.Conv2d(current, channels, kernel_size=3, padding=1), nn.ReLU(inplace=True),
                       nn.Conv2d(channels, channels, kernel_size=3, padding=1), nn.ReLU(inplace=True),
                       nn.MaxPool2d(kernel_size=2, stride=2)]
            current = channels
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d((4, 4))
        self.classifier = nn.Sequential(
            nn.Linear(current * 4 * 4, 1024), nn.ReLU(inplace=True), nn.Linear(1024, num_classes))

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (batch_size, 3, image_size, image_size).

        Returns:
            torch.Tensor: Shape (batch_size, num_classes).
        """
        x = self.features(x)
        x = self.pool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


batch_size = 16
image_size = 128
stage_channels = [32, 64, 128, 256]
num_classes = 100


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [stage_channels, num_classes]
