import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Clamps values to a range given at construction.
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0):
        super(Model, self).__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Clips x to [min_val, max_val].

        Args:
            x (torch.Tensor): Input of any shape; here (batch_size, dim).

        Returns:
            torch.Tensor: Same shape as x.
        """
        return F.hardtanh(x, min_val=self.min_val, max_val=self.max_val)


batch_size = 4096
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [-1.0, 1.0]
