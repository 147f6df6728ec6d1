import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Instance normalisation: every (sample, channel) plane is normalised on its own.
    """

    def __init__(self, num_features: int):
        super(Model, self).__init__()
        self.inorm = nn.InstanceNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, features, size, size).

        Returns:
            torch.Tensor: Same shape.
        """
        return self.inorm(x)


batch_size = 32
features = 64
size = 256


def get_inputs():
    x = torch.randn(batch_size, features, size, size)
    return [x]


def get_init_inputs():
    return [features]
