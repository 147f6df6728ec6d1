"""CUDA C++ embedding lookup: one warp per token copies its table row with 16-byte float4
loads and stores when the row length and pointers allow it (scalar copies otherwise); ids are
checked against the vocabulary with a device assert, as PyTorch's own kernel does."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/macros/Macros.h>
#include <cstdint>

constexpr int WARPS = 8;

__global__ void embedding_kernel(const int64_t* __restrict__ idx, const float* __restrict__ table,
                                 float* __restrict__ out, int64_t tokens, int64_t dim, int64_t vocab, bool vec) {
    const int lane = threadIdx.x & 31;
    const int64_t t = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (t >= tokens) return;
    const int64_t id = idx[t];
    CUDA_KERNEL_ASSERT(id >= 0 && id < vocab);
    const float* src = table + id * dim;
    float* dst = out + t * dim;
    if (vec) {
        const float4* s4 = reinterpret_cast<const float4*>(src);
        float4* d4 = reinterpret_cast<float4*>(dst);
        for (int64_t i = lane; i < dim / 4; i += 32) d4[i] = s4[i];
    } else {
        for (int64_t i = lane; i < dim; i += 32) dst[i] = src[i];
    }
}

torch::Tensor embedding_lookup(torch::Tensor idx, torch::Tensor table) {
    TORCH_CHECK(idx.is_cuda() && table.is_cuda(), "embedding_lookup: inputs must be CUDA tensors");
    TORCH_CHECK(idx.scalar_type() == torch::kInt64, "embedding_lookup: ids must be int64");
    TORCH_CHECK(table.scalar_type() == torch::kFloat32 && table.dim() == 2, "embedding_lookup: table must be a 2-D float32 tensor");
    auto ic = idx.contiguous();
    auto tc = table.contiguous();
    const int64_t tokens = ic.numel(), vocab = tc.size(0), dim = tc.size(1);
    auto out_sizes = ic.sizes().vec();
    out_sizes.push_back(dim);
    auto out = torch::empty(out_sizes, tc.options());
    if (tokens == 0 || dim == 0) return out;
    const bool vec = (dim % 4 == 0) && (reinterpret_cast<uintptr_t>(tc.data_ptr<float>()) % 16 == 0)
                     && (reinterpret_cast<uintptr_t>(out.data_ptr<float>()) % 16 == 0);
    const int64_t blocks = (tokens + WARPS - 1) / WARPS;
    embedding_kernel<<<(unsigned int)blocks, WARPS * 32, 0, at::cuda::getCurrentCUDAStream()>>>(
        ic.data_ptr<int64_t>(), tc.data_ptr<float>(), out.data_ptr<float>(), tokens, dim, vocab, vec);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_CPP = "torch::Tensor embedding_lookup(torch::Tensor idx, torch::Tensor table);"

_ext = load_inline(name="wb_zoo_l1_26_embedding_gather_cuda_warp_per_token", cpp_sources=_CPP,
                   cuda_sources=_CUDA, functions=["embedding_lookup"], extra_cuda_cflags=["-O3"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder shape: the executor copies the reference's table in by name.
        self.emb = nn.Embedding(1, 1)

    def forward(self, idx):
        return _ext.embedding_lookup(idx, self.emb.weight)
