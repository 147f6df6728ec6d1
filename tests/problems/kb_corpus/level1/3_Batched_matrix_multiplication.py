import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A batch of independent matrix products computed with torch.bmm.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Multiplies each A[i] by B[i].

        Args:
            A (torch.Tensor): Shape (batch_size, m, k).
            B (torch.Tensor): Shape (batch_size, k, n).

        Returns:
            torch.Tensor: Shape (batch_size, m, n).
        """
        return torch.bmm(A, B)


batch_size = 128
m = 256
k = 512
n = 384


def get_inputs():
    A = torch.rand(batch_size, m, k)
    B = torch.rand(batch_size, k, n)
    return [A, B]


def get_init_inputs():
    return []
