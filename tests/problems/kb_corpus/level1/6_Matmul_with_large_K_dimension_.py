import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A small output computed from a very long inner dimension: (m, k) @ (k, n) with k >> m, n.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A (torch.Tensor): Shape (m, k).
            B (torch.Tensor): Shape (k, n).

        Returns:
            torch.Tensor: Shape (m, n).
        """
        return torch.matmul(A, B)


m = 256
n = 256
k = 262144


def get_inputs():
    A = torch.rand(m, k)
    B = torch.rand(k, n)
    return [A, B]


def get_init_inputs():
    return []
