import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Many narrow layers: launch overhead rather than arithmetic dominates.
    """

    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super(Model, self).__init__()
        layers = [nn.Linear(input_size, hidden_size), nn.ReLU()]
        for _ in range(num_layers - 1):
            layers += [nn.Linear(hidden_size, hidden_size), nn.ReLU()]
        layers.append(nn.Linear(hidden_size, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


batch_size = 4096
input_size = 1024
hidden_size = 256
num_layers = 16
output_size = 16


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size]
