import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Log-softmax over the height axis of an image-shaped tensor (dim=2 of 4).
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, channels, size, size).

        Returns:
            torch.Tensor: Same shape.
        """
        return torch.log_softmax(x, dim=2)


batch_size = 16
channels = 64
size = 256


def get_inputs():
    x = torch.randn(batch_size, channels, size, size)
    return [x]


def get_init_inputs():
    return []
