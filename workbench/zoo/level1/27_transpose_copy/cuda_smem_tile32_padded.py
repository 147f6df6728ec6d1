"""CUDA C++ transpose through shared memory: 32x32 tiles, 32x8 threads each moving four rows;
reads and writes are both coalesced, and the tile is padded to 33 columns so the transposed
shared-memory reads hit 32 different banks."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

constexpr int TILE = 32, ROWS = 8;

__global__ void transpose_tile_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t M, int64_t N) {
    __shared__ float tile[TILE][TILE + 1];
    const int64_t c0 = (int64_t)blockIdx.x * TILE;   // columns of x
    const int64_t r0 = (int64_t)blockIdx.y * TILE;   // rows of x
    for (int j = threadIdx.y; j < TILE; j += ROWS) {
        const int64_t r = r0 + j, c = c0 + threadIdx.x;
        if (r < M && c < N) tile[j][threadIdx.x] = x[r * N + c];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < TILE; j += ROWS) {
        const int64_t r = c0 + j;              // row of y = column of x
        const int64_t c = r0 + threadIdx.x;    // column of y = row of x
        if (r < N && c < M) y[r * M + c] = tile[threadIdx.x][j];
    }
}

torch::Tensor transpose_copy(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "transpose_copy: x must be a CUDA float32 tensor");
    TORCH_CHECK(x.dim() == 2, "transpose_copy: x must be 2-D");
    auto xc = x.contiguous();
    const int64_t M = xc.size(0), N = xc.size(1);
    auto y = torch::empty({N, M}, xc.options());
    if (M == 0 || N == 0) return y;
    TORCH_CHECK((M + TILE - 1) / TILE <= 65535, "transpose_copy: too many rows for the grid's y dimension");
    dim3 grid((unsigned int)((N + TILE - 1) / TILE), (unsigned int)((M + TILE - 1) / TILE));
    dim3 block(TILE, ROWS);
    transpose_tile_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), M, N);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_CPP = "torch::Tensor transpose_copy(torch::Tensor x);"

_ext = load_inline(name="wb_zoo_l1_27_transpose_copy_cuda_smem_tile32_padded", cpp_sources=_CPP,
                   cuda_sources=_CUDA, functions=["transpose_copy"], extra_cuda_cflags=["-O3"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.transpose_copy(x)
