import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Product of two lower triangular matrices; the result is lower triangular too.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        """
        Args:
            A (torch.Tensor): Lower triangular, shape (n, n).
            B (torch.Tensor): Lower triangular, shape (n, n).

        Returns:
            torch.Tensor: tril(A @ B), shape (n, n).
        """
        return torch.tril(torch.matmul(A, B))


n = 4096


def get_inputs():
    A = torch.tril(torch.rand(n, n))
    B = torch.tril(torch.rand(n, n))
    return [A, B]


def get_init_inputs():
    return []
