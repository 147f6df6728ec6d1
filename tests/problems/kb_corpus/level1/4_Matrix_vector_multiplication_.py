import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A matrix times a column vector.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Computes A @ B where B is a single column.

        Args:
            A (torch.Tensor): Matrix of shape (m, k).
            B (torch.Tensor): Column of shape (k, 1).

        Returns:
            torch.Tensor: Column of shape (m, 1).
        """
        return torch.matmul(A, B)


m = 2048
k = 65536


def get_inputs():
    A = torch.rand(m, k)
    B = torch.rand(k, 1)
    return [A, B]


def get_init_inputs():
    return []
