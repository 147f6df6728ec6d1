import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """
    The tanh approximation of GELU as written out in GPT-2 style code.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, dim).

        Returns:
            torch.Tensor: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), same shape.
        """
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
        return 0.5 * x * (1.0 + torch.tanh(inner))


batch_size = 4096
dim = 8192


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
