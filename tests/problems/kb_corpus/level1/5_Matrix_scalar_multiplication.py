import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Scales every entry of a matrix by a Python scalar passed as a second input.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        """
        Returns A * s.

        Args:
            A (torch.Tensor): Matrix of shape (m, n).
            s (float): The scale.

        Returns:
            torch.Tensor: Shape (m, n).
        """
        return A * s


m = 8192
n = 8192


def get_inputs():
    A = torch.rand(m, n)
    s = 3.5
    return [A, s]


def get_init_inputs():
    return []
