import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A regression head: a two-layer MLP and the mean squared error to targets.
    """

    def __init__(self, in_features, hidden, out_features):
        super(Model, self).__init__()
        self.net = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(),
                                 nn.Linear(hidden, out_features))

    def forward(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_features).
            targets (torch.Tensor): Shape (batch_size, out_features).

        Returns:
            torch.Tensor: A scalar.
        """
        return torch.nn.functional.mse_loss(self.net(x), targets)


batch_size = 4096
in_features = 1024
hidden = 4096
out_features = 1024


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.randn(batch_size, out_features)]


def get_init_inputs():
    return [in_features, hidden, out_features]
