import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A tall, thin matrix times a short, wide one: (m, n) @ (n, m) with n much smaller than m.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        """
        Args:
            A (torch.Tensor): Shape (m, n).
            B (torch.Tensor): Shape (n, m).

        Returns:
            torch.Tensor: Shape (m, m).
        """
        return torch.matmul(A, B)


m = 12288
n = 48


def get_inputs():
    A = torch.rand(m, n)
    B = torch.rand(n, m)
    return [A, B]


def get_init_inputs():
    return []
