import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Softmax over the middle dimension of a 3-D tensor: the reduced axis is strided in memory.
    """

    def __init__(self, dim: int):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, channels, width).

        Returns:
            torch.Tensor: Same shape, normalised along `dim`.
        """
        return torch.softmax(x, dim=self.dim)


batch_size = 64
channels = 512
width = 2048
softmax_dim = 1


def get_inputs():
    x = torch.randn(batch_size, channels, width)
    return [x]


def get_init_inputs():
    return [softmax_dim]
