import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Mean squared error between predictions and targets.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        Args:
            predictions (torch.Tensor): Shape (batch_size, dim).
            targets (torch.Tensor): Shape (batch_size, dim).

        Returns:
            torch.Tensor: A scalar.
        """
        return torch.mean((predictions - targets) ** 2)


batch_size = 4096
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
