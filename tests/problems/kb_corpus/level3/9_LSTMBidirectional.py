import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A bidirectional LSTM; the classifier reads both directions at the last step.
    """

    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super(Model, self).__init__()
        self.h0 = torch.randn((num_layers * 2, batch_size, hidden_size))
        self.c0 = torch.randn((num_layers * 2, batch_size, hidden_size))
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True,
                            bidirectional=True)
        self.fc = nn.Linear(hidden_size * 2, output_size)

    def forward(self, x):
        self.h0 = self.h0.to(x.device)
        self.c0 = self.c0.to(x.device)
        out, hn = self.lstm(x, (self.h0, self.c0))
        return self.fc(out[:, -1, :])


batch_size = 10
sequence_length = 32
input_size = 128
hidden_size = 128
num_layers = 1
output_size = 10


def get_inputs():
    return [torch.randn(batch_size, sequence_length, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size]
