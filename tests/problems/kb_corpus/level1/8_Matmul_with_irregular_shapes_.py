import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Matrix product whose sizes are not multiples of any tile size.
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


m = 4093
k = 2963
n = 3947


def get_inputs():
    A = torch.rand(m, k)
    B = torch.rand(k, n)
    return [A, B]


def get_init_inputs():
    return []
