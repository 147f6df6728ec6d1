import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Transposed 3-D convolution, scaling, batch normalisation, global average pooling.
    """

    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super(Model, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor
        self.batch_norm = nn.BatchNorm3d(out_channels)
        self.global_avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Shape (batch_size, in_channels, depth, height, width).

        Returns:
            torch.Tensor: Shape (batch_size, out_channels, 1, 1, 1).
        """
        x = self.conv_transpose(x)
        x = x * self.scale_factor
        x = self.batch_norm(x)
        x = self.global_avg_pool(x)
        return x


batch_size = 16
in_channels = 32
out_channels = 16
depth, height, width = 24, 48, 48
kernel_size = 3
scale_factor = 2.0


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale_factor]
