import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Applies ReLU elementwise.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Sets negative entries to zero.

        Args:
            x (torch.Tensor): Input of any shape; here (batch_size, dim).

        Returns:
            torch.Tensor: Same shape as x.
        """
        return torch.relu(x)


batch_size = 4096
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
