import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Index of the smallest value along one dimension.
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
            torch.Tensor: int64 indices; `dim` removed.
        """
        return torch.argmin(x, dim=self.dim)


batch_size = 128
dim1 = 512
dim2 = 2048
reduce_dim = 2


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
