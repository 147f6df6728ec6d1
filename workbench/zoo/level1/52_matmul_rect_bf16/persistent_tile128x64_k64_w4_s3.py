"""Persistent bf16 matmul, fp32 accumulation: a fixed number of programs (one per SM, or fewer
when there are fewer tiles) each loop over output tiles pid, pid + P, pid + 2P, ... in grouped
order (GROUP_M=8); 128x64 tiles, BLOCK_K=64, 4 warps, 3 pipeline stages."""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

# Triton's CPU interpreter computes bf16 dots wrongly: only there are the operands upcast.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _mm_persistent(a_ptr, b_ptr, c_ptr, M, N, K,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr, UPCAST: tl.constexpr):
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    n_tiles = tiles_m * tiles_n
    per_group = GROUP_M * tiles_n
    rk = tl.arange(0, BLOCK_K)
    for t in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
        first_m = (t // per_group) * GROUP_M
        rows = tl.minimum(tiles_m - first_m, GROUP_M)
        pm = first_m + (t % per_group) % rows
        pn = (t % per_group) // rows
        rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            kk = k0 + rk
            a = tl.load(a_ptr + rm[:, None].to(tl.int64) * K + kk[None, :],
                        mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + kk[:, None].to(tl.int64) * N + rn[None, :],
                        mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
            if UPCAST:
                acc += tl.dot(a.to(tl.float32), b.to(tl.float32))
            else:
                acc += tl.dot(a, b)
        cmask = (rm[:, None] < M) & (rn[None, :] < N)
        tl.store(c_ptr + rm[:, None].to(tl.int64) * N + rn[None, :], acc.to(c_ptr.dtype.element_ty), mask=cmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        a = a.contiguous()
        b = b.contiguous()
        m, k = a.shape
        n = b.shape[1]
        bm = 128
        bn = 64
        bk = 64
        if a.is_cuda:
            n_sm = torch.cuda.get_device_properties(a.device).multi_processor_count
        else:
            n_sm = 4
        c = torch.empty((m, n), device=a.device, dtype=a.dtype)
        n_tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
        grid = (min(n_tiles, n_sm),)
        _mm_persistent[grid](a, b, c, m, n, k, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                             UPCAST=_INTERPRETED, num_warps=4, num_stages=3)
        return c
