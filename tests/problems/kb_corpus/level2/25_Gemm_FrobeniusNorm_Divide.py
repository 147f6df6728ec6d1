import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Linear layer whose whole output is divided by its Frobenius norm.
    """

    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.fc(x)
        return x / torch.norm(x, p="fro")


batch_size = 2048
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
