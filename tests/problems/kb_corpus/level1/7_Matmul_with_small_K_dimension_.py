import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A large output from a short inner dimension: an outer-product-like GEMM.
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


m = 8192
n = 8192
k = 32


def get_inputs():
    A = torch.rand(m, k)
    B = torch.rand(k, n)
    return [A, B]


def get_init_inputs():
    return []
