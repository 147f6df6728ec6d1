import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Index of the largest value along one dimension.
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
        return torch.argmax(x, dim=self.dim)


batch_size = 128
dim1 = 2048
dim2 = 512
reduce_dim = 1


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
