"""CUDA C++ softmax: one 512-thread block per row. Each thread keeps an online (max, rescaled
sum) over its strided elements; warp shuffles and shared memory reduce them to the row's max
and sum; a second pass over the row (mostly from L2) writes exp(x - max) / sum."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>
#include <cmath>

constexpr int THREADS = 512;

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
// Block-wide reduction; every thread gets the result. `smem` holds 32 floats.
template <bool IS_MAX>
__device__ float block_reduce(float v, float* smem) {
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    v = IS_MAX ? warp_max(v) : warp_sum(v);
    if (lane == 0) smem[wid] = v;
    __syncthreads();
    const int nw = (blockDim.x + 31) >> 5;
    if (wid == 0) {
        float w = lane < nw ? smem[lane] : (IS_MAX ? -INFINITY : 0.f);
        w = IS_MAX ? warp_max(w) : warp_sum(w);
        if (lane == 0) smem[0] = w;
    }
    __syncthreads();
    const float r = smem[0];
    __syncthreads();
    return r;
}

__global__ void softmax_row_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    __shared__ float smem[32];
    const float* xr = x + (int64_t)blockIdx.x * n;
    float* yr = y + (int64_t)blockIdx.x * n;
    float m = -INFINITY, s = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        const float v = xr[i];
        if (v > m) { s = s * __expf(m - v) + 1.f; m = v; }
        else { s += __expf(v - m); }
    }
    const float row_max = block_reduce<true>(m, smem);
    const float mine = (s > 0.f) ? s * __expf(m - row_max) : 0.f;
    const float inv = 1.f / block_reduce<false>(mine, smem);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = __expf(xr[i] - row_max) * inv;
}

torch::Tensor softmax_lastdim(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "softmax_lastdim: x must be a CUDA float32 tensor");
    TORCH_CHECK(x.dim() >= 1, "softmax_lastdim: x needs at least one dimension");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.size(-1);
    const int64_t rows = n == 0 ? 0 : xc.numel() / n;
    if (rows == 0) return y;
    TORCH_CHECK(rows <= 2147483647LL, "softmax_lastdim: too many rows for a 1-D grid");
    softmax_row_kernel<<<(unsigned int)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_CPP = "torch::Tensor softmax_lastdim(torch::Tensor x);"

_ext = load_inline(name="wb_zoo_l1_01_softmax_cuda_block_per_row_online", cpp_sources=_CPP,
                   cuda_sources=_CUDA, functions=["softmax_lastdim"], extra_cuda_cflags=["-O3"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.softmax_lastdim(x)
