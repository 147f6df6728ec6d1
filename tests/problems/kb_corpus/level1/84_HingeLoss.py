import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Hinge loss for binary classification with labels in {-1, +1}.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        Args:
            predictions (torch.Tensor): Scores, shape (batch_size, dim).
            targets (torch.Tensor): Labels of +1 or -1, shape (batch_size, 1), broadcast over dim.

        Returns:
            torch.Tensor: mean(max(0, 1 - predictions * targets)), a scalar.
        """
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


batch_size = 4096
dim = 16384


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randint(0, 2, (batch_size, 1)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
