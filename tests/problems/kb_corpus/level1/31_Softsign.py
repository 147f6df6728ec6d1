import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Softsign written out with an absolute value.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Computes x / (1 + |x|).

        Args:
            x (torch.Tensor): Input of any shape; here (batch_size, dim).

        Returns:
            torch.Tensor: Same shape as x.
        """
        return x / (1 + torch.abs(x))


batch_size = 4096
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
