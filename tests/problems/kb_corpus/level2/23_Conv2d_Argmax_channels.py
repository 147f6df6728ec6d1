import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A segmentation head: a 1x1 convolution to class scores, then the argmax over classes.
    """

    def __init__(self, in_channels, num_classes):
        super(Model, self).__init__()
        self.classifier = nn.Conv2d(in_channels, num_classes, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, height, width).

        Returns:
            torch.Tensor: int64 class per pixel, shape (batch_size, height, width).
        """
        logits = self.classifier(x)
        return torch.argmax(logits, dim=1)


batch_size = 16
in_channels = 64
num_classes = 21
height = width = 256


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, num_classes]
