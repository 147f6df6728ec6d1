"""CUDA C++ SwiGLU: a grid-stride loop, one output element per thread step; bf16 loads, fp32 math, the SiLU rounded to bf16 before the product as the reference does."""
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
__global__ void swiglu_kernel(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y,
                              int64_t rows, int64_t half) {
    const int64_t total = rows * half;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / half;
        const int64_t c = i - r * half;
        const float a = __bfloat162float(x[r * 2 * half + c]);
        const float g = __bfloat162float(x[r * 2 * half + half + c]);
        const float s = __bfloat162float(__float2bfloat16(a / (1.0f + __expf(-a))));
        y[i] = __float2bfloat16(s * g);
    }
}

torch::Tensor swiglu(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kBFloat16, "swiglu: x must be a CUDA bfloat16 tensor");
    TORCH_CHECK(x.size(-1) % 2 == 0, "swiglu: last dimension must be even");
    auto xc = x.contiguous();
    const int64_t half = xc.size(-1) / 2;
    const int64_t rows = xc.numel() / xc.size(-1);
    auto sizes = xc.sizes().vec();
    sizes.back() = half;
    auto y = torch::empty(sizes, xc.options());
    const int64_t total = rows * half;
    if (total == 0) return y;
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((total + threads - 1) / threads, (int64_t)1 << 20);
    swiglu_kernel<<<(unsigned int)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const __nv_bfloat16*>(xc.data_ptr<at::BFloat16>()),
        reinterpret_cast<__nv_bfloat16*>(y.data_ptr<at::BFloat16>()), rows, half);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_CPP = "torch::Tensor swiglu(torch::Tensor x);"

_ext = load_inline(name="wb_zoo_l2_10_swiglu_bf16_cuda_grid_stride", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["swiglu"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swiglu(x)
