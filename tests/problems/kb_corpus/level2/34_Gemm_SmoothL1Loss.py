import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Box regression: a linear layer predicts offsets; smooth L1 loss against the targets.
    """

    def __init__(self, in_features, out_features, beta):
        super(Model, self).__init__()
        self.reg = nn.Linear(in_features, out_features)
        self.loss = nn.SmoothL1Loss(beta=beta)

    def forward(self, x, targets):
        return self.loss(self.reg(x), targets)


batch_size = 8192
in_features = 2048
out_features = 1024
beta = 1.0 / 9


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.randn(batch_size, out_features)]


def get_init_inputs():
    return [in_features, out_features, beta]
