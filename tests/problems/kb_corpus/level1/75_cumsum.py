import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Inclusive prefix sum along one dimension.
    """

    def __init__(self, dim: int):
        """
        Args:
            dim (int): The dimension scanned.
        """
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, *input_shape).

        Returns:
            torch.Tensor: Same shape; out[:, i] = x[:, 0] + ... + x[:, i].
        """
        return torch.cumsum(x, dim=self.dim)


batch_size = 4096
input_shape = (16384,)
dim = 1


def get_inputs():
    return [torch.randn(batch_size, *input_shape)]


def get_init_inputs():
    return [dim]
