import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Product of two upper triangular matrices, kept upper triangular.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A (torch.Tensor): Upper triangular, shape (n, n).
            B (torch.Tensor): Upper triangular, shape (n, n).

        Returns:
            torch.Tensor: triu(A @ B), shape (n, n).
        """
        return torch.triu(torch.matmul(A, B))


n = 4096


def get_inputs():
    A = torch.triu(torch.rand(n, n))
    B = torch.triu(torch.rand(n, n))
    return [A, B]


def get_init_inputs():
    return []
