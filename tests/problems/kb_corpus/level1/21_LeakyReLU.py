import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Leaky ReLU with a negative slope chosen at construction.
    """

    def __init__(self, negative_slope: float = 0.01):
        super(Model, self).__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Scales negative entries by the slope.

        Args:
            x (torch.Tensor): Input of any shape; here (batch_size, dim).

        Returns:
            torch.Tensor: Same shape as x.
        """
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)


batch_size = 4096
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [0.05]
