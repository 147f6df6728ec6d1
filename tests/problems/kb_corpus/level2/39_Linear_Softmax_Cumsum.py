import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A predicted cumulative distribution: linear layer to logits, softmax over the bins, and
    the cumulative sum over the bins (as used for ordinal targets and top-p cut-offs).
    """

    def __init__(self, in_features, num_bins):
        super(Model, self).__init__()
        self.logits = nn.Linear(in_features, num_bins)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_features).

        Returns:
            torch.Tensor: Non-decreasing rows ending at 1, shape (batch_size, num_bins).
        """
        p = torch.softmax(self.logits(x), dim=1)
        return torch.cumsum(p, dim=1)


batch_size = 8192
in_features = 1024
num_bins = 4096


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, num_bins]
