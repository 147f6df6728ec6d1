import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A 4-D tensor contracted with a matrix over its last index, written with einsum:
    C[b, i, j, k] = sum_l A[b, i, j, l] * B[l, k].
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A (torch.Tensor): Shape (b, i, j, l).
            B (torch.Tensor): Shape (l, k).

        Returns:
            torch.Tensor: Shape (b, i, j, k).
        """
        return torch.einsum("bijl,lk->bijk", A, B)


b = 8
i = 128
j = 256
l = 256
k = 512


def get_inputs():
    A = torch.rand(b, i, j, l)
    B = torch.rand(l, k)
    return [A, B]


def get_init_inputs():
    return []
