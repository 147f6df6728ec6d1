"""Linear, GELU, scale."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 512
in_features = 2048
out_features = 8192
scale = 0.5

class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.gelu(self.fc(x)) * scale


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
