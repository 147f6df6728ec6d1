import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Returns-to-go: per-step rewards predicted by a linear layer from per-step features, summed
    from each step to the end of the episode (a reverse cumulative sum over time).
    """

    def __init__(self, feature_dim):
        super(Model, self).__init__()
        self.reward = nn.Linear(feature_dim, 1)

    def forward(self, states):
        """
        Args:
            states (torch.Tensor): Shape (batch_size, horizon, feature_dim).

        Returns:
            torch.Tensor: Shape (batch_size, horizon).
        """
        r = self.reward(states).squeeze(-1)
        return torch.flip(torch.cumsum(torch.flip(r, dims=[1]), dim=1), dims=[1])


batch_size = 512
horizon = 1024
feature_dim = 512


def get_inputs():
    return [torch.randn(batch_size, horizon, feature_dim)]


def get_init_inputs():
    return [feature_dim]
