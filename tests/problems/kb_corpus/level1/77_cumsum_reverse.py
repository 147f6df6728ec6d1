import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Suffix sum: the cumulative sum taken from the end of the dimension towards its start.
    """

    def __init__(self, dim: int):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, length).

        Returns:
            torch.Tensor: Same shape; out[:, i] = x[:, i] + ... + x[:, -1].
        """
        return torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)


batch_size = 4096
length = 16384
dim = 1


def get_inputs():
    return [torch.randn(batch_size, length)]


def get_init_inputs():
    return [dim]
