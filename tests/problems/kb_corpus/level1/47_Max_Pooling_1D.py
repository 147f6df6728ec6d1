import torch
import torch.nn as nn


class Model(nn.Module):
    """
    1-D max pooling with stride, padding and dilation.
    """

    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0, dilation: int = 1):
        super(Model, self).__init__()
        self.pool = nn.MaxPool1d(kernel_size=kernel_size, stride=stride, padding=padding,
                                 dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Shape (batch_size, features, sequence_length).

        Returns:
            torch.Tensor: Shape (batch_size, features, output_length).
        """
        return self.pool(x)


batch_size = 64
features = 64
sequence_length = 16384
kernel_size = 4
stride = 2
padding = 2
dilation = 3


def get_inputs():
    x = torch.randn(batch_size, features, sequence_length)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation]
