import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Attention pooling over a sequence: scores from a matrix-vector product with a learned
    query, softmax over positions (dim 1), and the weighted sum of the states.
    """

    def __init__(self, hidden):
        super(Model, self).__init__()
        self.query = nn.Parameter(torch.randn(hidden) * hidden ** -0.5)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """
        Args:
            h (torch.Tensor): Shape (batch_size, seq_len, hidden).

        Returns:
            torch.Tensor: Shape (batch_size, hidden).
        """
        scores = torch.matmul(h, self.query)
        weights = torch.softmax(scores, dim=1)
        return torch.sum(h * weights.unsqueeze(-1), dim=1)


batch_size = 256
seq_len = 1024
hidden = 1024


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]
