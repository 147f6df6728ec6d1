import torch
import torch.nn as nn


class Model(nn.Module):
    """
    One multiplication of two square matrices, C = A @ B.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Multiplies A by B.

        Args:
            A (torch.Tensor): Left matrix, shape (n, n).
            B (torch.Tensor): Right matrix, shape (n, n).

        Returns:
            torch.Tensor: The product, shape (n, n).
        """
        return torch.matmul(A, B)


n = 4096


def get_inputs():
    A = torch.rand(n, n)
    B = torch.rand(n, n)
    return [A, B]


def get_init_inputs():
    return []  # nothing to initialise
