import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Strided transposed convolution (2x upsampling), a bias add, ELU.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding,
                 bias_shape):
        super(Model, self).__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size,
                                                 stride=stride, padding=padding,
                                                 output_padding=output_padding, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x + self.bias
        return F.elu(x)


batch_size = 32
in_channels = 64
out_channels = 32
height = width = 64
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
bias_shape = (out_channels, 1, 1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape]
