import torch
import torch.nn as nn


class Model(nn.Module):
    """
    An LSTM cell stepped over a sequence in Python, returning the last hidden state.
    """

    def __init__(self, input_size, hidden_size):
        super(Model, self).__init__()
        self.cell = nn.LSTMCell(input_size, hidden_size)
        self.hidden_size = hidden_size

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (batch_size, seq_len, input_size).

        Returns:
            torch.Tensor: Shape (batch_size, hidden_size).
        """
        h = x.new_zeros(x.shape[0], self.hidden_size)
        c = x.new_zeros(x.shape[0], self.hidden_size)
        for t in range(x.shape[1]):
            h, c = self.cell(x[:, t, :], (h, c))
        return h


batch_size = 16
seq_len = 32
input_size = 128
hidden_size = 256


def get_inputs():
    return [torch.randn(batch_size, seq_len, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
