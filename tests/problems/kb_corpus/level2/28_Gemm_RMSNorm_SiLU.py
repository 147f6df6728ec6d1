import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Linear layer, RMS normalisation written out (with a learned gain), SiLU.
    """

    def __init__(self, in_features, hidden_size, eps=1e-6):
        super(Model, self).__init__()
        self.fc = nn.Linear(in_features, hidden_size, bias=False)
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, seq_len, in_features).

        Returns:
            torch.Tensor: Shape (batch_size, seq_len, hidden_size).
        """
        h = self.fc(x)
        h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight
        return torch.nn.functional.silu(h)


batch_size = 16
seq_len = 512
in_features = 2048
hidden_size = 2048


def get_inputs():
    return [torch.randn(batch_size, seq_len, in_features)]


def get_init_inputs():
    return [in_features, hidden_size]
