import torch
import torch.nn as nn


class Model(nn.Module):
    """
    C = A^T @ B^T: both operands are stored transposed.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A (torch.Tensor): Shape (k, m).
            B (torch.Tensor): Shape (n, k).

        Returns:
            torch.Tensor: Shape (m, n).
        """
        return torch.matmul(A.T, B.T)


m = 1536
k = 3072
n = 2560


def get_inputs():
    A = torch.rand(k, m)
    B = torch.rand(n, k)
    return [A, B]


def get_init_inputs():
    return []
