import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Two very wide hidden layers.
    """

    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super(Model, self).__init__()
        layers = []
        current = input_size
        for hidden in hidden_layer_sizes:
            layers += [nn.Linear(current, hidden), nn.ReLU()]
            current = hidden
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


batch_size = 256
input_size = 1024
hidden_layer_sizes = [8192, 8192]
output_size = 1024


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_layer_sizes, output_size]
