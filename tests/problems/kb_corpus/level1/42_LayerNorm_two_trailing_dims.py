import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Layer normalisation over the last two dimensions, with the shape given as a list.
    """

    def __init__(self, normalized_shape: list, eps: float = 1e-5):
        super(Model, self).__init__()
        self.ln = nn.LayerNorm(normalized_shape, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, seq_len, heads, head_dim).

        Returns:
            torch.Tensor: Same shape; each x[b, s] is normalised over (heads, head_dim).
        """
        return self.ln(x)


batch_size = 32
seq_len = 1024
heads = 16
head_dim = 128
normalized_shape = [heads, head_dim]


def get_inputs():
    x = torch.randn(batch_size, seq_len, heads, head_dim)
    return [x]


def get_init_inputs():
    return [normalized_shape, 1e-5]
