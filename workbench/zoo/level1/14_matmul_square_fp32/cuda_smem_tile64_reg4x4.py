"""CUDA C++ fp32 SGEMM on CUDA cores (no tensor cores, no TF32): 64x64 output tiles per
256-thread block, K staged through shared memory 16 at a time, each thread accumulating a 4x4
register block (rows ty + 16i, columns tx + 16j, so stores coalesce and shared reads do not
conflict). Edges are zero-padded, so any M, N, K works."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

constexpr int BM = 64, BN = 64, BK = 16, THREADS = 256;

__global__ void sgemm_tile_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                  int64_t M, int64_t N, int64_t K) {
    __shared__ float As[BK][BM + 1];
    __shared__ float Bs[BK][BN];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int64_t row0 = (int64_t)blockIdx.y * BM, col0 = (int64_t)blockIdx.x * BN;
    float acc[4][4];
    #pragma unroll
    for (int i = 0; i < 4; ++i)
        #pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;
    for (int64_t k0 = 0; k0 < K; k0 += BK) {
        for (int t = threadIdx.x; t < BM * BK; t += THREADS) {
            const int r = t / BK, c = t % BK;
            const int64_t gr = row0 + r, gk = k0 + c;
            As[c][r] = (gr < M && gk < K) ? A[gr * K + gk] : 0.f;
        }
        for (int t = threadIdx.x; t < BK * BN; t += THREADS) {
            const int r = t / BN, c = t % BN;
            const int64_t gk = k0 + r, gc = col0 + c;
            Bs[r][c] = (gk < K && gc < N) ? B[gk * N + gc] : 0.f;
        }
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[4], b[4];
            #pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = As[k][ty + 16 * i];
            #pragma unroll
            for (int j = 0; j < 4; ++j) b[j] = Bs[k][tx + 16 * j];
            #pragma unroll
            for (int i = 0; i < 4; ++i)
                #pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int64_t r = row0 + ty + 16 * i;
        if (r >= M) continue;
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int64_t c = col0 + tx + 16 * j;
            if (c < N) C[r * N + c] = acc[i][j];
        }
    }
}

torch::Tensor sgemm_tiled(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "sgemm_tiled: inputs must be CUDA tensors");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "sgemm_tiled: inputs must be float32");
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "sgemm_tiled: need (M, K) @ (K, N)");
    auto ac = a.contiguous();
    auto bc = b.contiguous();
    const int64_t M = ac.size(0), K = ac.size(1), N = bc.size(1);
    auto c = torch::empty({M, N}, ac.options());
    if (M == 0 || N == 0) return c;
    if (K == 0) return c.zero_();
    TORCH_CHECK((M + BM - 1) / BM <= 65535, "sgemm_tiled: M too large for the grid's y dimension");
    dim3 grid((unsigned int)((N + BN - 1) / BN), (unsigned int)((M + BM - 1) / BM));
    sgemm_tile_kernel<<<grid, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        ac.data_ptr<float>(), bc.data_ptr<float>(), c.data_ptr<float>(), M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}
"""

_CPP = "torch::Tensor sgemm_tiled(torch::Tensor a, torch::Tensor b);"

_ext = load_inline(name="wb_zoo_l1_14_matmul_square_fp32_cuda_smem_tile64_reg4x4", cpp_sources=_CPP,
                   cuda_sources=_CUDA, functions=["sgemm_tiled"], extra_cuda_cflags=["-O3"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return _ext.sgemm_tiled(a, b)
