import torch
import torch.nn as nn


class Model(nn.Module):
    """
    2-D batch normalisation (training mode: statistics of the batch).
    """

    def __init__(self, num_features: int):
        """
        Args:
            num_features (int): Channels of the input.
        """
        super(Model, self).__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, features, dim1, dim2).

        Returns:
            torch.Tensor: Same shape, normalised per channel.
        """
        return self.bn(x)


batch_size = 32
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features]
