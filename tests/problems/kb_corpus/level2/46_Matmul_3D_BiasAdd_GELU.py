import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A token-wise projection written as a 3-D tensor times a weight matrix, a bias, GELU.
    """

    def __init__(self, d_model, d_ff):
        super(Model, self).__init__()
        self.w = nn.Parameter(torch.randn(d_model, d_ff) * d_model ** -0.5)
        self.b = nn.Parameter(torch.zeros(d_ff))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, seq_len, d_model).

        Returns:
            torch.Tensor: Shape (batch_size, seq_len, d_ff).
        """
        return torch.nn.functional.gelu(torch.matmul(x, self.w) + self.b)


batch_size = 16
seq_len = 512
d_model = 1024
d_ff = 4096


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, d_ff]
