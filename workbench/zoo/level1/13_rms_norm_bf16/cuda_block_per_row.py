"""CUDA C++ RMSNorm in bf16: one 256-thread block per row; bf16 loads, the mean of squares in
fp32, then y = bf16(bf16(x * rsqrt(ms + 1e-6)) * weight), rounding where the reference rounds.
The output pass re-reads the row (mostly from L2)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>
#include <cstdint>

constexpr int THREADS = 256;

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ float block_sum(float v, float* smem) {
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) smem[wid] = v;
    __syncthreads();
    if (wid == 0) {
        float w = lane < (int)((blockDim.x + 31) >> 5) ? smem[lane] : 0.f;
        w = warp_sum(w);
        if (lane == 0) smem[0] = w;
    }
    __syncthreads();
    const float r = smem[0];
    __syncthreads();
    return r;
}

__global__ void rms_norm_bf16_kernel(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                                     __nv_bfloat16* __restrict__ y, int64_t n) {
    __shared__ float smem[32];
    const __nv_bfloat16* xr = x + (int64_t)blockIdx.x * n;
    __nv_bfloat16* yr = y + (int64_t)blockIdx.x * n;
    float q = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) { const float v = __bfloat162float(xr[i]); q += v * v; }
    const float r = rsqrtf(block_sum(q, smem) / (float)n + 1e-6f);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        const float normed = __bfloat162float(__float2bfloat16(__bfloat162float(xr[i]) * r));
        yr[i] = __float2bfloat16(normed * __bfloat162float(w[i]));
    }
}

torch::Tensor rms_norm_bf16(torch::Tensor x, torch::Tensor w) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kBFloat16, "rms_norm_bf16: x must be a CUDA bfloat16 tensor");
    TORCH_CHECK(w.is_cuda() && w.scalar_type() == torch::kBFloat16, "rms_norm_bf16: weight must be a CUDA bfloat16 tensor");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    const int64_t n = xc.size(-1);
    TORCH_CHECK(wc.numel() == n, "rms_norm_bf16: weight needs x.size(-1) elements");
    auto y = torch::empty_like(xc);
    const int64_t rows = n == 0 ? 0 : xc.numel() / n;
    if (rows == 0) return y;
    TORCH_CHECK(rows <= 2147483647LL, "rms_norm_bf16: too many rows for a 1-D grid");
    rms_norm_bf16_kernel<<<(unsigned int)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const __nv_bfloat16*>(xc.data_ptr<at::BFloat16>()),
        reinterpret_cast<const __nv_bfloat16*>(wc.data_ptr<at::BFloat16>()),
        reinterpret_cast<__nv_bfloat16*>(y.data_ptr<at::BFloat16>()), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_CPP = "torch::Tensor rms_norm_bf16(torch::Tensor x, torch::Tensor w);"

_ext = load_inline(name="wb_zoo_l1_13_rms_norm_bf16_cuda_block_per_row", cpp_sources=_CPP,
                   cuda_sources=_CUDA, functions=["rms_norm_bf16"], extra_cuda_cflags=["-O3"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder shape: the executor copies the reference's weight in by name.
        self.weight = nn.Parameter(torch.ones(1, dtype=torch.bfloat16))

    def forward(self, x):
        return _ext.rms_norm_bf16(x, self.weight)
