import torch
import torch.nn as nn


class Model(nn.Module):
    """
    An Elman RNN unrolled by hand: at each step the input and hidden state are concatenated,
    projected, and squashed with tanh; the output layer reads every step's hidden state.
    """

    def __init__(self, input_size, hidden_size, output_size):
        super(Model, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (seq_len, batch_size, input_size).

        Returns:
            torch.Tensor: Shape (seq_len, batch_size, output_size).
        """
        hidden = torch.zeros(x.shape[1], self.hidden_size, device=x.device, dtype=x.dtype)
        outputs = []
        for t in range(x.shape[0]):
            hidden = torch.tanh(self.i2h(torch.cat((x[t], hidden), dim=1)))
            outputs.append(self.h2o(hidden))
        return torch.stack(outputs, dim=0)


batch_size = 256
seq_len = 32
input_size = 512
hidden_size = 512
output_size = 128


def get_inputs():
    return [torch.randn(seq_len, batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
