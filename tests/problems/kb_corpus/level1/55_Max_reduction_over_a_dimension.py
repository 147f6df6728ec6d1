import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Maximum over one dimension.
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
            torch.Tensor: The largest value along `dim`.
        """
        return torch.max(x, dim=self.dim)[0]


batch_size = 64
dim1 = 2048
dim2 = 1024
reduce_dim = 2


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
