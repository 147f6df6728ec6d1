import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Log-softmax over a dimension chosen at construction (1 here).
    """

    def __init__(self, dim: int = 1):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, dim).

        Returns:
            torch.Tensor: Log-probabilities, same shape as x.
        """
        return torch.log_softmax(x, dim=self.dim)


batch_size = 4096
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [1]
