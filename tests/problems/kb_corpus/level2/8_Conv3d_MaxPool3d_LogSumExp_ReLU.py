import torch
import torch.nn as nn


class Model(nn.Module):
    """
    3-D convolution, 3-D max pooling, log-sum-exp over channels, ReLU.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super(Model, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride,
                              padding=padding)
        self.max_pool = nn.MaxPool3d(kernel_size=2, stride=2)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, depth, height, width).

        Returns:
            torch.Tensor: Shape (batch_size, 1, depth / 2, height / 2, width / 2).
        """
        x = self.conv(x)
        x = self.max_pool(x)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = torch.relu(x)
        return x


batch_size = 16
in_channels = 8
out_channels = 32
depth, height, width = 32, 64, 64
kernel_size = 3
stride = 1
padding = 1


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
