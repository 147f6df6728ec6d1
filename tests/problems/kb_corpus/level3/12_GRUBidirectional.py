import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A bidirectional GRU returning its final hidden states.
    """

    def __init__(self, input_size, hidden_size, num_layers=2):
        super(Model, self).__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, batch_first=False,
                          bidirectional=True)
        self.h0 = torch.randn((num_layers * 2, batch_size, hidden_size))

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (seq_len, batch_size, input_size).

        Returns:
            torch.Tensor: h_n, shape (num_layers * 2, batch_size, hidden_size).
        """
        self.h0 = self.h0.to(x.device)
        output, h_n = self.gru(x, self.h0)
        return h_n


batch_size = 10
seq_len = 32
input_size = 128
hidden_size = 128
num_layers = 1


def get_inputs():
    return [torch.randn(seq_len, batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]
