import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A discrete-time survival head: hazards from a linear layer and a sigmoid, survival as the
    cumulative product of (1 - hazard) over time steps.
    """

    def __init__(self, in_features, num_steps):
        super(Model, self).__init__()
        self.hazard = nn.Linear(in_features, num_steps)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_features).

        Returns:
            torch.Tensor: Survival probabilities, shape (batch_size, num_steps).
        """
        h = torch.sigmoid(self.hazard(x) - 4.0)
        return torch.cumprod(1 - h, dim=1)


batch_size = 16384
in_features = 1024
num_steps = 256


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, num_steps]
