"""Linear; returns the output and its row sums (two outputs)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2048
in_features = 1024
out_features = 2048

class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.fc(x)
        return y, y.sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
