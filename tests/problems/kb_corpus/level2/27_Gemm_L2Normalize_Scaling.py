import torch
import torch.nn as nn


class Model(nn.Module):
    """
    An embedding projection: linear layer, L2 normalisation of each row, and a temperature.
    """

    def __init__(self, in_features, embed_dim, temperature):
        super(Model, self).__init__()
        self.proj = nn.Linear(in_features, embed_dim, bias=False)
        self.temperature = temperature

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_features).

        Returns:
            torch.Tensor: Shape (batch_size, embed_dim), rows of length 1 / temperature.
        """
        z = self.proj(x)
        z = z / torch.norm(z, p=2, dim=1, keepdim=True).clamp_min(1e-12)
        return z / self.temperature


batch_size = 8192
in_features = 2048
embed_dim = 1024
temperature = 0.07


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, embed_dim, temperature]
