import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Attention scores: a batched product of queries with transposed keys, scaled by a factor
    passed with the inputs, then softmax over the last dimension.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, scale: float) -> torch.Tensor:
        """
        Args:
            q (torch.Tensor): Shape (batch_heads, seq_len, head_dim).
            k (torch.Tensor): Shape (batch_heads, seq_len, head_dim).
            scale (float): Multiplies the scores, usually head_dim ** -0.5.

        Returns:
            torch.Tensor: Shape (batch_heads, seq_len, seq_len).
        """
        scores = torch.bmm(q, k.transpose(1, 2)) * scale
        return torch.softmax(scores, dim=-1)


batch_heads = 128
seq_len = 1024
head_dim = 64


def get_inputs():
    q = torch.randn(batch_heads, seq_len, head_dim)
    k = torch.randn(batch_heads, seq_len, head_dim)
    return [q, k, head_dim ** -0.5]


def get_init_inputs():
    return []
