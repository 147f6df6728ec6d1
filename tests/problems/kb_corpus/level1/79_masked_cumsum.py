import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Prefix sum that counts only the entries a boolean mask keeps.
    """

    def __init__(self, dim: int):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, length).
            mask (torch.Tensor): Boolean, same shape as x.

        Returns:
            torch.Tensor: Same shape; the running sum of x where mask is True.
        """
        return torch.cumsum(x * mask, dim=self.dim)


batch_size = 4096
length = 16384
dim = 1


def get_inputs():
    x = torch.randn(batch_size, length)
    mask = torch.randint(0, 2, (batch_size, length)).bool()
    return [x, mask]


def get_init_inputs():
    return [dim]
