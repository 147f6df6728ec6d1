import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A post-norm transformer encoder block built from nn.MultiheadAttention and a GELU MLP.
    """

    def __init__(self, d_model, num_heads, d_ff):
        super(Model, self).__init__()
        self.attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
        self.norm1 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (batch_size, seq_len, d_model).

        Returns:
            torch.Tensor: Same shape.
        """
        a, _ = self.attn(x, x, x, need_weights=False)
        x = self.norm1(x + a)
        x = self.norm2(x + self.ff(x))
        return x


batch_size = 32
seq_len = 256
d_model = 512
num_heads = 8
d_ff = 2048


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads, d_ff]
