import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Product of two symmetric square matrices.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A (torch.Tensor): Symmetric, shape (n, n).
            B (torch.Tensor): Symmetric, shape (n, n).

        Returns:
            torch.Tensor: A @ B, shape (n, n).
        """
        return torch.matmul(A, B)


n = 4096


def get_inputs():
    A = torch.rand(n, n)
    A = (A + A.T) / 2
    B = torch.rand(n, n)
    B = (B + B.T) / 2
    return [A, B]


def get_init_inputs():
    return []
