import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Linear layer, ReLU, and L1 normalisation of each row (non-negative weights summing to 1).
    """

    def __init__(self, in_features, out_features, eps=1e-6):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.eps = eps

    def forward(self, x):
        x = torch.relu(self.linear(x))
        return x / (torch.sum(torch.abs(x), dim=1, keepdim=True) + self.eps)


batch_size = 2048
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
