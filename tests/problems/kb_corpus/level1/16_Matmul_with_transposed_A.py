import torch
import torch.nn as nn


class Model(nn.Module):
    """
    C = A^T @ B, with A stored as (k, m).
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A (torch.Tensor): Shape (k, m).
            B (torch.Tensor): Shape (k, n).

        Returns:
            torch.Tensor: Shape (m, n).
        """
        return torch.matmul(A.T, B)


m = 1024
k = 4096
n = 2048


def get_inputs():
    A = torch.rand(k, m)
    B = torch.rand(k, n)
    return [A, B]


def get_init_inputs():
    return []
