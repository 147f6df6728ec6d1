import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Exponential linear unit with a configurable alpha.
    """

    def __init__(self, alpha: float = 1.0):
        super(Model, self).__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies ELU.

        Args:
            x (torch.Tensor): Input of any shape; here (batch_size, dim).

        Returns:
            torch.Tensor: Same shape as x.
        """
        return F.elu(x, alpha=self.alpha)


batch_size = 4096
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [1.5]
