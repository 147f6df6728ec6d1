import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Divides a tensor by its Frobenius norm (one scalar over every element).
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Any shape; here (batch_size, features, dim1, dim2).

        Returns:
            torch.Tensor: x / ||x||_F, same shape.
        """
        norm = torch.norm(x, p="fro")
        return x / norm


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return []
