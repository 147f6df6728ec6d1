import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Per-row gains applied as a diagonal matrix to a matmul's output, then a bias and ReLU.
    """

    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x: torch.Tensor, gains: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_features).
            gains (torch.Tensor): One gain per row, shape (batch_size,).

        Returns:
            torch.Tensor: relu(diag(gains) @ (x @ W) + b), shape (batch_size, out_features).
        """
        y = torch.matmul(x, self.weight)
        y = torch.diag(gains) @ y
        return torch.relu(y + self.bias)


batch_size = 4096
in_features = 4096
out_features = 2048


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.rand(batch_size)]


def get_init_inputs():
    return [in_features, out_features]
