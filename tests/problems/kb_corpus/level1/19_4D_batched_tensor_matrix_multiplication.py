import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A 4-D activation (batch, heads, rows, features) times one shared matrix, through
    torch.matmul's broadcasting.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, heads, rows, k).
            w (torch.Tensor): Shape (k, n).

        Returns:
            torch.Tensor: Shape (batch_size, heads, rows, n).
        """
        return torch.matmul(x, w)


batch_size = 16
heads = 16
rows = 512
k = 256
n = 512


def get_inputs():
    x = torch.randn(batch_size, heads, rows, k)
    w = torch.randn(k, n)
    return [x, w]


def get_init_inputs():
    return []
