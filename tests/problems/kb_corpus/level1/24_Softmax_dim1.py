import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Softmax over the feature dimension of a 2-D input.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, dim).

        Returns:
            torch.Tensor: Rows that sum to one, shape (batch_size, dim).
        """
        return torch.softmax(x, dim=1)


batch_size = 4096
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
