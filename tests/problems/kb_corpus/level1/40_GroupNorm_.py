import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Group normalisation of channels split into groups.
    """

    def __init__(self, num_features: int, num_groups: int):
        """
        Args:
            num_features (int): Channels of the input.
            num_groups (int): Groups the channels are split into.
        """
        super(Model, self).__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, features, dim1, dim2).

        Returns:
            torch.Tensor: Same shape.
        """
        return self.gn(x)


batch_size = 32
features = 64
num_groups = 8
dim1 = 256
dim2 = 256


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features, num_groups]
