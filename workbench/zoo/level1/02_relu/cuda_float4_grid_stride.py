"""CUDA C++ ReLU: 16-byte float4 loads and stores in a grid-stride loop (at most 8 blocks of
256 threads per SM's worth of work), a scalar tail for the last n % 4 elements, and a scalar
fallback when the pointers are not 16-byte aligned. NaN propagates as in torch.relu."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <algorithm>
#include <cstdint>

__device__ __forceinline__ float relu1(float v) { return v < 0.f ? 0.f : v; }

__global__ void relu_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4,
                                 const float* __restrict__ xs, float* __restrict__ ys, int64_t n) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = x[i];
        v.x = relu1(v.x); v.y = relu1(v.y); v.z = relu1(v.z); v.w = relu1(v.w);
        y[i] = v;
    }
    if (blockIdx.x == 0) {
        for (int64_t i = n4 * 4 + threadIdx.x; i < n; i += blockDim.x) ys[i] = relu1(xs[i]);
    }
}

__global__ void relu_scalar_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += stride) y[i] = relu1(x[i]);
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "relu_forward: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "relu_forward: x must be float32");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return y;
    const float* xp = xc.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const int threads = 256;
    const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    auto stream = at::cuda::getCurrentCUDAStream();
    const bool aligned = (reinterpret_cast<uintptr_t>(xp) % 16 == 0) && (reinterpret_cast<uintptr_t>(yp) % 16 == 0);
    if (aligned) {
        const int64_t n4 = n / 4;
        const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>((n4 + threads - 1) / threads, (int64_t)sms * 8));
        relu_vec4_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(xp), reinterpret_cast<float4*>(yp), n4, xp, yp, n);
    } else {
        const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, (int64_t)sms * 8);
        relu_scalar_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(xp, yp, n);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_CPP = "torch::Tensor relu_forward(torch::Tensor x);"

_ext = load_inline(name="wb_zoo_l1_02_relu_cuda_float4_grid_stride", cpp_sources=_CPP,
                   cuda_sources=_CUDA, functions=["relu_forward"], extra_cuda_cflags=["-O3"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.relu_forward(x)
