import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A 3-D tensor times a matrix: the last dimension of A is contracted with the first of B.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A (torch.Tensor): Shape (b, m, k).
            B (torch.Tensor): Shape (k, l).

        Returns:
            torch.Tensor: Shape (b, m, l).
        """
        return torch.matmul(A, B)


b = 16
m = 1024
k = 2048
l = 768


def get_inputs():
    A = torch.rand(b, m, k)
    B = torch.rand(k, l)
    return [A, B]


def get_init_inputs():
    return []
