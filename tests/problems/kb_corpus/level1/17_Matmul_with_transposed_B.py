import torch
import torch.nn as nn


class Model(nn.Module):
    """
    C = A @ B^T, with B stored as (n, k) as a linear layer stores its weight.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A (torch.Tensor): Shape (m, k).
            B (torch.Tensor): Shape (n, k).

        Returns:
            torch.Tensor: Shape (m, n).
        """
        return torch.matmul(A, B.T)


m = 2048
k = 1536
n = 4096


def get_inputs():
    A = torch.rand(m, k)
    B = torch.rand(n, k)
    return [A, B]


def get_init_inputs():
    return []
