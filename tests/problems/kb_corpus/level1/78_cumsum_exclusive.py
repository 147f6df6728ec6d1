import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Exclusive prefix sum: element i receives the sum of the elements before it (0 first).
    """

    def __init__(self, dim: int):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, length).

        Returns:
            torch.Tensor: Same shape; out[:, 0] = 0, out[:, i] = x[:, 0] + ... + x[:, i - 1].
        """
        zeros = torch.zeros_like(x.narrow(self.dim, 0, 1))
        shifted = torch.cat([zeros, x.narrow(self.dim, 0, x.size(self.dim) - 1)], dim=self.dim)
        return torch.cumsum(shifted, dim=self.dim)


batch_size = 4096
length = 16384
dim = 1


def get_inputs():
    return [torch.randn(batch_size, length)]


def get_init_inputs():
    return [dim]
