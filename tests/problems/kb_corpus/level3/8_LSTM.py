import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A stacked LSTM over a sequence, classifying from the last step's output.
    """

    def __init__(self, input_size, hidden_size, num_layers, output_size, dropout=0.0):
        """
        Args:
            input_size (int): Features per step.
            hidden_size (int): Hidden state size.
            num_layers (int): Stacked layers.
            output_size (int): Classes.
            dropout (float): Dropout between layers (0 keeps the reference deterministic).
        """
        super(Model, self).__init__()
        self.h0 = torch.randn((num_layers, batch_size, hidden_size))
        self.c0 = torch.randn((num_layers, batch_size, hidden_size))
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True,
                            dropout=dropout, bidirectional=False)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (batch_size, sequence_length, input_size).

        Returns:
            torch.Tensor: Shape (batch_size, output_size).
        """
        self.h0 = self.h0.to(x.device)
        self.c0 = self.c0.to(x.device)
        out, state = self.lstm(x, (self.h0, self.c0))
        return self.fc(out[:, -1, :])


batch_size = 10
sequence_length = 32
input_size = 128
hidden_size = 192
num_layers = 2
output_size = 10


def get_inputs():
    return [torch.randn(batch_size, sequence_length, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size]
