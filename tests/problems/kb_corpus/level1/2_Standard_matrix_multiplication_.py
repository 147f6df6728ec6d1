import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A rectangular matrix product: (m, k) times (k, n).
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Computes A @ B.

        Args:
            A (torch.Tensor): Shape (m, k).
            B (torch.Tensor): Shape (k, n).

        Returns:
            torch.Tensor: Shape (m, n).
        """
        return torch.matmul(A, B)


m = 2048
k = 4096
n = 3072


def get_inputs():
    A = torch.rand(m, k)
    B = torch.rand(k, n)
    return [A, B]


def get_init_inputs():
    return []
