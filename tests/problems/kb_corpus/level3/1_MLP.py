import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A multi-layer perceptron whose hidden widths are given as a list.
    """

    def __init__(self, input_size, layer_sizes, output_size):
        """
        Args:
            input_size (int): Features of the input.
            layer_sizes (list): Width of each hidden layer.
            output_size (int): Features of the output.
        """
        super(Model, self).__init__()
        layers = []
        current = input_size
        for width in layer_sizes:
            layers.append(nn.Linear(current, width))
            layers.append(nn.ReLU())
            current = width
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (batch_size, input_size).

        Returns:
            torch.Tensor: Shape (batch_size, output_size).
        """
        return self.network(x)


batch_size = 1024
input_size = 4096
layer_sizes = [2048, 1024, 512]
output_size = 128


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, layer_sizes, output_size]
