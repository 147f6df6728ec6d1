import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Running mean over the valid (unmasked) entries of each row: a masked cumulative sum of the
    values divided by the cumulative count of valid entries.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, length).
            mask (torch.Tensor): Boolean, shape (batch_size, length).

        Returns:
            torch.Tensor: Shape (batch_size, length).
        """
        m = mask.to(x.dtype)
        total = torch.cumsum(x * m, dim=1)
        count = torch.cumsum(m, dim=1)
        return total / count.clamp(min=1.0)


batch_size = 4096
length = 8192


def get_inputs():
    x = torch.randn(batch_size, length)
    mask = torch.rand(batch_size, length) > 0.3
    return [x, mask]


def get_init_inputs():
    return []
