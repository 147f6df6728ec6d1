import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Sum over one dimension, keeping it (size 1).
    """

    def __init__(self, dim: int):
        """
        Args:
            dim (int): The dimension reduced.
        """
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, dim1, dim2).

        Returns:
            torch.Tensor: x summed over `dim`, which is kept with size 1.
        """
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 64
dim1 = 2048
dim2 = 1024
reduce_dim = 1


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
