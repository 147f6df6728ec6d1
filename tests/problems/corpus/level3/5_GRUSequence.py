"""A one-layer GRU over a sequence; returns outputs and the last hidden state."""
import torch
import torch.nn as nn
import torch.nn.functional as F

seq_len = 256
batch_size = 32
input_size = 256
hidden_size = 512

class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size)

    def forward(self, x):
        out, h = self.gru(x)
        return out, h


def get_inputs():
    return [torch.randn(seq_len, batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
