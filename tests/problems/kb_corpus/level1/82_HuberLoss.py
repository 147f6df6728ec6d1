import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Smooth L1 (Huber) loss, quadratic below `beta` and linear above it.
    """

    def __init__(self, beta: float = 1.0):
        super(Model, self).__init__()
        self.beta = beta

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        Args:
            predictions (torch.Tensor): Shape (batch_size, dim).
            targets (torch.Tensor): Shape (batch_size, dim).

        Returns:
            torch.Tensor: A scalar.
        """
        return F.smooth_l1_loss(predictions, targets, beta=self.beta)


batch_size = 4096
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return [0.5]
