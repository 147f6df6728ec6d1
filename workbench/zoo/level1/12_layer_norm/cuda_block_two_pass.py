"""CUDA C++ LayerNorm: one 256-thread block per row; pass 1 sums x for the mean, pass 2 sums
(x - mean)^2 for the variance (numerically safer than E[x^2] - mean^2), pass 3 writes
(x - mean) * rstd * weight + bias. Passes 2 and 3 re-read the row, mostly from L2."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

constexpr int THREADS = 256;

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
// Block-wide sum; every thread gets the result. `smem` holds 32 floats.
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

__global__ void layer_norm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                  const float* __restrict__ b, float* __restrict__ y, int64_t n, float eps) {
    __shared__ float smem[32];
    const float* xr = x + (int64_t)blockIdx.x * n;
    float* yr = y + (int64_t)blockIdx.x * n;
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += xr[i];
    const float mean = block_sum(s, smem) / (float)n;
    float q = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) { const float d = xr[i] - mean; q += d * d; }
    const float rstd = rsqrtf(block_sum(q, smem) / (float)n + eps);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = (xr[i] - mean) * rstd * w[i] + b[i];
}

torch::Tensor layer_norm_rows(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "layer_norm_rows: x must be a CUDA float32 tensor");
    TORCH_CHECK(w.is_cuda() && b.is_cuda() && w.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32,
                "layer_norm_rows: weight and bias must be CUDA float32 tensors");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    auto bc = b.contiguous();
    const int64_t n = xc.size(-1);
    TORCH_CHECK(wc.numel() == n && bc.numel() == n, "layer_norm_rows: weight and bias need x.size(-1) elements");
    auto y = torch::empty_like(xc);
    const int64_t rows = n == 0 ? 0 : xc.numel() / n;
    if (rows == 0) return y;
    TORCH_CHECK(rows <= 2147483647LL, "layer_norm_rows: too many rows for a 1-D grid");
    layer_norm_kernel<<<(unsigned int)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), n, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_CPP = "torch::Tensor layer_norm_rows(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);"

_ext = load_inline(name="wb_zoo_l1_12_layer_norm_cuda_block_two_pass", cpp_sources=_CPP,
                   cuda_sources=_CUDA, functions=["layer_norm_rows"], extra_cuda_cflags=["-O3"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder shape: the executor copies the reference's weight and bias in by name.
        self.ln = nn.LayerNorm(1)

    def forward(self, x):
        return _ext.layer_norm_rows(x, self.ln.weight, self.ln.bias, self.ln.eps)
