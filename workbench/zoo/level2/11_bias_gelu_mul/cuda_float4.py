"""CUDA C++ bias + exact GELU + gate multiply: float4 vectorised loads when the row length is a multiple of 4 (scalar path otherwise), grid-stride loop."""
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
__device__ __forceinline__ float gelu_exact(float a) { return 0.5f * a * (1.0f + erff(a * 0.70710678118654752f)); }

__global__ void bgm_vec4(const float4* __restrict__ x, const float4* __restrict__ g, const float4* __restrict__ b,
                         float4* __restrict__ y, int64_t total4, int64_t n4) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total4; i += (int64_t)gridDim.x * blockDim.x) {
        const float4 xv = x[i], gv = g[i], bv = b[i % n4];
        float4 o;
        o.x = gelu_exact(xv.x + bv.x) * gv.x;
        o.y = gelu_exact(xv.y + bv.y) * gv.y;
        o.z = gelu_exact(xv.z + bv.z) * gv.z;
        o.w = gelu_exact(xv.w + bv.w) * gv.w;
        y[i] = o;
    }
}

__global__ void bgm_scalar(const float* __restrict__ x, const float* __restrict__ g, const float* __restrict__ b,
                           float* __restrict__ y, int64_t total, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = gelu_exact(x[i] + b[i % n]) * g[i];
    }
}

torch::Tensor bias_gelu_mul(torch::Tensor x, torch::Tensor g, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "bias_gelu_mul: x must be a CUDA float32 tensor");
    TORCH_CHECK(g.sizes() == x.sizes() && g.scalar_type() == torch::kFloat32, "bias_gelu_mul: g must match x");
    auto xc = x.contiguous();
    auto gc = g.contiguous();
    auto bc = bias.contiguous();
    const int64_t n = xc.size(-1);
    TORCH_CHECK(bc.numel() == n, "bias_gelu_mul: bias length must equal the last dimension");
    auto y = torch::empty_like(xc);
    const int64_t total = xc.numel();
    if (total == 0) return y;
    const int threads = 256;
    auto stream = at::cuda::getCurrentCUDAStream();
    const bool aligned = ((reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) | reinterpret_cast<uintptr_t>(gc.data_ptr<float>()) |
                           reinterpret_cast<uintptr_t>(bc.data_ptr<float>())) % 16) == 0;
    if (n % 4 == 0 && aligned) {
        const int64_t total4 = total / 4;
        const int64_t blocks = std::min<int64_t>((total4 + threads - 1) / threads, (int64_t)1 << 20);
        bgm_vec4<<<(unsigned int)blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(xc.data_ptr<float>()), reinterpret_cast<const float4*>(gc.data_ptr<float>()),
            reinterpret_cast<const float4*>(bc.data_ptr<float>()), reinterpret_cast<float4*>(y.data_ptr<float>()), total4, n / 4);
    } else {
        const int64_t blocks = std::min<int64_t>((total + threads - 1) / threads, (int64_t)1 << 20);
        bgm_scalar<<<(unsigned int)blocks, threads, 0, stream>>>(xc.data_ptr<float>(), gc.data_ptr<float>(),
                                                                 bc.data_ptr<float>(), y.data_ptr<float>(), total, n);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_CPP = "torch::Tensor bias_gelu_mul(torch::Tensor x, torch::Tensor g, torch::Tensor bias);"

_ext = load_inline(name="wb_zoo_l2_11_bias_gelu_mul_cuda_float4", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["bias_gelu_mul"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameter in by name.
        self.bias = nn.Parameter(torch.empty(0))

    def forward(self, x, g):
        return _ext.bias_gelu_mul(x, g, self.bias)
