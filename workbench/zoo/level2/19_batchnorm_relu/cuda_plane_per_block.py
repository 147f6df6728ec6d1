"""CUDA C++ eval BatchNorm + ReLU: one thread block per (image, channel) plane, the channel's scale and shift computed once per block, a strided loop over the plane."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <cstdint>
__global__ void bn_relu_plane(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ mean,
                              const float* __restrict__ var, const float* __restrict__ w, const float* __restrict__ b,
                              int C, int64_t HW, float eps) {
    const int64_t plane = blockIdx.x;
    const int c = (int)(plane % C);
    const float scale = w[c] * rsqrtf(var[c] + eps);
    const float shift = b[c] - mean[c] * scale;
    const float* xp = x + plane * HW;
    float* yp = y + plane * HW;
    for (int64_t i = threadIdx.x; i < HW; i += blockDim.x) yp[i] = fmaxf(xp[i] * scale + shift, 0.0f);
}

torch::Tensor bn_relu(torch::Tensor x, torch::Tensor mean, torch::Tensor var, torch::Tensor w, torch::Tensor b, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 4, "bn_relu: x must be CUDA float32 NCHW");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t planes = xc.size(0) * xc.size(1);
    const int64_t hw = xc.size(2) * xc.size(3);
    if (planes == 0 || hw == 0) return y;
    bn_relu_plane<<<(unsigned int)planes, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), mean.contiguous().data_ptr<float>(), var.contiguous().data_ptr<float>(),
        w.contiguous().data_ptr<float>(), b.contiguous().data_ptr<float>(), (int)xc.size(1), hw, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_CPP = "torch::Tensor bn_relu(torch::Tensor x, torch::Tensor mean, torch::Tensor var, torch::Tensor w, torch::Tensor b, double eps);"

_ext = load_inline(name="wb_zoo_l2_19_batchnorm_relu_cuda_plane_per_block", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["bn_relu"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters and buffers in by name.
        self.bn = nn.BatchNorm2d(1)

    def forward(self, x):
        bn = self.bn
        return _ext.bn_relu(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps)
