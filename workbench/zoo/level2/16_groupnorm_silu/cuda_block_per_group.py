"""CUDA C++ GroupNorm + SiLU: one 512-thread block per (image, group); warp-shuffle block reductions for the mean and then the centred variance, a third pass writes the output."""
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
// Sum of v over the thread block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
__device__ __forceinline__ float block_sum(float v, float* sh) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    if (wid == 0) {
        v = lane < nw ? sh[lane] : 0.f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (lane == 0) sh[0] = v;
    }
    __syncthreads();
    return sh[0];
}

__global__ void gn_silu(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                        float* __restrict__ y, int G, int CPG, int64_t HW, float eps) {
    __shared__ float sh[32];
    const int64_t gsize = (int64_t)CPG * HW;
    const int64_t base = (int64_t)blockIdx.x * gsize;
    const int grp = blockIdx.x % G;
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < gsize; i += blockDim.x) s += x[base + i];
    const float mean = block_sum(s, sh) / (float)gsize;
    float q = 0.f;
    for (int64_t i = threadIdx.x; i < gsize; i += blockDim.x) {
        const float d = x[base + i] - mean;
        q += d * d;
    }
    const float rstd = rsqrtf(block_sum(q, sh) / (float)gsize + eps);
    for (int64_t i = threadIdx.x; i < gsize; i += blockDim.x) {
        const int c = grp * CPG + (int)(i / HW);
        const float v = (x[base + i] - mean) * rstd * w[c] + b[c];
        y[base + i] = v / (1.0f + __expf(-v));
    }
}

torch::Tensor groupnorm_silu(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t groups, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 4, "groupnorm_silu: x must be CUDA float32 NCHW");
    TORCH_CHECK(x.size(1) % groups == 0, "groupnorm_silu: channels must divide into groups");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t blocks = xc.size(0) * groups;
    const int64_t hw = xc.size(2) * xc.size(3);
    if (blocks == 0 || hw == 0) return y;
    gn_silu<<<(unsigned int)blocks, 512, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), w.contiguous().data_ptr<float>(), b.contiguous().data_ptr<float>(), y.data_ptr<float>(),
        (int)groups, (int)(xc.size(1) / groups), hw, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_CPP = "torch::Tensor groupnorm_silu(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t groups, double eps);"

_ext = load_inline(name="wb_zoo_l2_16_groupnorm_silu_cuda_block_per_group", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["groupnorm_silu"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name; the problem uses 32 groups.
        self.gn = nn.GroupNorm(32, 32)

    def forward(self, x):
        return _ext.groupnorm_silu(x, self.gn.weight, self.gn.bias, self.gn.num_groups, self.gn.eps)
