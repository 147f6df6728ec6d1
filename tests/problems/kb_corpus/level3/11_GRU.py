import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A stacked GRU over a time-major sequence with a given initial state; returns all outputs.
    """

    def __init__(self, input_size, hidden_size, num_layers=3, bias=True, batch_first=False):
        super(Model, self).__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0,
                          bidirectional=False)
        self.h0 = torch.randn((num_layers, batch_size, hidden_size))

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (seq_len, batch_size, input_size).

        Returns:
            torch.Tensor: Shape (seq_len, batch_size, hidden_size).
        """
        self.h0 = self.h0.to(x.device)
        output, h_n = self.gru(x, self.h0)
        return output


batch_size = 10
seq_len = 32
input_size = 128
hidden_size = 192
num_layers = 2


def get_inputs():
    return [torch.randn(seq_len, batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]
