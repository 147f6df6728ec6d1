import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A linear layer with sizes that are neither powers of two nor tile multiples, then tanh.
    """

    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.tanh(self.fc(x))


batch_size = 3001
in_features = 1999
out_features = 4093


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
