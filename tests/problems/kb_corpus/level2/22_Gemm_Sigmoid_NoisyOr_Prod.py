import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A noisy-OR head: per-cause probabilities from a linear layer and a sigmoid, combined as
    1 - prod(1 - p) over a short group of causes.
    """

    def __init__(self, in_features, num_outputs, num_causes):
        super(Model, self).__init__()
        self.num_outputs = num_outputs
        self.num_causes = num_causes
        self.linear = nn.Linear(in_features, num_outputs * num_causes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_features).

        Returns:
            torch.Tensor: Probabilities, shape (batch_size, num_outputs).
        """
        p = torch.sigmoid(self.linear(x))
        p = p.view(x.shape[0], self.num_outputs, self.num_causes)
        return 1 - torch.prod(1 - p, dim=2)


batch_size = 4096
in_features = 2048
num_outputs = 256
num_causes = 8


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, num_outputs, num_causes]
