"""CUDA C++ row sum: one warp per row, eight rows per 256-thread block; lanes read the row
with 16-byte float4 loads when the row start is aligned (scalar loads otherwise), accumulate
in registers and finish with a butterfly of warp shuffles. No shared memory."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

constexpr int WARPS = 8;

__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t n) {
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (row >= rows) return;   // whole warps leave together: the shuffles below stay full-warp
    const float* xr = x + row * n;
    float acc = 0.f;
    if ((n % 4 == 0) && (reinterpret_cast<uintptr_t>(xr) % 16 == 0)) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        for (int64_t i = lane; i < n / 4; i += 32) {
            const float4 v = x4[i];
            acc += (v.x + v.y) + (v.z + v.w);
        }
    } else {
        for (int64_t i = lane; i < n; i += 32) acc += xr[i];
    }
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) y[row] = acc;
}

torch::Tensor row_sum(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "row_sum: x must be a CUDA float32 tensor");
    TORCH_CHECK(x.dim() >= 1, "row_sum: x needs at least one dimension");
    auto xc = x.contiguous();
    const int64_t n = xc.size(-1);
    auto out_sizes = xc.sizes().vec();
    out_sizes.pop_back();
    auto y = torch::empty(out_sizes, xc.options());
    const int64_t rows = y.numel();
    if (rows == 0) return y;
    if (n == 0) return y.zero_();
    const int64_t blocks = (rows + WARPS - 1) / WARPS;
    row_sum_kernel<<<(unsigned int)blocks, WARPS * 32, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), rows, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_CPP = "torch::Tensor row_sum(torch::Tensor x);"

_ext = load_inline(name="wb_zoo_l1_07_sum_rows_cuda_warp_per_row", cpp_sources=_CPP,
                   cuda_sources=_CUDA, functions=["row_sum"], extra_cuda_cflags=["-O3"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.row_sum(x)
