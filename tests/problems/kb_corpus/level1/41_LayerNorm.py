import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Layer normalisation over the three trailing dimensions (channels and space together).
    """

    def __init__(self, normalized_shape: tuple):
        """
        Args:
            normalized_shape (tuple): The trailing shape normalised over.
        """
        super(Model, self).__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, features, dim1, dim2).

        Returns:
            torch.Tensor: Same shape.
        """
        return self.ln(x)


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [(features, dim1, dim2)]
