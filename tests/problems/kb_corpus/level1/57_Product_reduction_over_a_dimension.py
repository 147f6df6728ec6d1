import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Product over a short dimension; inputs are drawn near 1 so that the product stays in range.
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
            torch.Tensor: The product along `dim`.
        """
        return torch.prod(x, dim=self.dim)


batch_size = 256
dim1 = 32
dim2 = 8192
reduce_dim = 1


def get_inputs():
    x = torch.rand(batch_size, dim1, dim2) * 0.5 + 0.75
    return [x]


def get_init_inputs():
    return [reduce_dim]
