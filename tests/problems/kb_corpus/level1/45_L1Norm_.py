import torch
import torch.nn as nn


class Model(nn.Module):
    """
    L1 normalisation of each row.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, dim).

        Returns:
            torch.Tensor: Each row divided by the sum of its absolute values.
        """
        return x / torch.sum(torch.abs(x), dim=1, keepdim=True)


batch_size = 4096
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
