import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Softmax over the last dimension of a 3-D tensor (attention-score shaped).
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, rows, cols).

        Returns:
            torch.Tensor: Same shape, each x[b, r, :] normalised.
        """
        return torch.softmax(x, dim=-1)


batch_size = 128
rows = 512
cols = 1024


def get_inputs():
    x = torch.randn(batch_size, rows, cols)
    return [x]


def get_init_inputs():
    return []
