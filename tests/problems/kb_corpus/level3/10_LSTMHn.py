import torch
import torch.nn as nn


class Model(nn.Module):
    """
    An LSTM returning its final hidden states (one per layer) rather than its outputs.
    """

    def __init__(self, input_size, hidden_size, num_layers):
        super(Model, self).__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, sequence_length, input_size).

        Returns:
            torch.Tensor: h_n, shape (num_layers, batch_size, hidden_size).
        """
        _, (h_n, _) = self.lstm(x)
        return h_n


batch_size = 16
sequence_length = 24
input_size = 128
hidden_size = 128
num_layers = 2


def get_inputs():
    return [torch.randn(batch_size, sequence_length, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]
