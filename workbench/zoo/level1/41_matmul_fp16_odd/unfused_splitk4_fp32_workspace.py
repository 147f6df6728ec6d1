"""Unfused split-K fp16 matmul: stage 1 gives each (output tile, K slice) pair its own program
(tiles 128x128x32, SPLIT_K 4, 8 warps, 3 stages) and writes fp32 partial products to a
(SPLIT_K, M, N) workspace; stage 2 sums the partials in a fixed order and casts to fp16.
Deterministic, but the workspace round trip costs several extra passes over C."""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

# Triton's CPU interpreter computes fp16 dots wrongly; only there are the operands upcast.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _mm_partial(a_ptr, b_ptr, ws_ptr, M, N, K, k_per_split, sam, sak, sbk, sbn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, UPCAST: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    ps = tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    k_start = ps * k_per_split
    k_end = tl.minimum(k_start + k_per_split, K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(k_start, k_end, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None].to(tl.int64) * sam + kk[None, :] * sak,
                    mask=(rm[:, None] < M) & (kk[None, :] < k_end), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + rn[None, :] * sbn,
                    mask=(kk[:, None] < k_end) & (rn[None, :] < N), other=0.0)
        if UPCAST:
            acc += tl.dot(a.to(tl.float32), b.to(tl.float32))
        else:
            acc += tl.dot(a, b)
    off = ps.to(tl.int64) * M * N + rm[:, None].to(tl.int64) * N + rn[None, :]
    tl.store(ws_ptr + off, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _sum_splits(ws_ptr, c_ptr, total, SPLITS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(SPLITS):
        acc += tl.load(ws_ptr + s * total + offs, mask=m, other=0.0)
    tl.store(c_ptr + offs, acc.to(c_ptr.dtype.element_ty), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        M, K = a.shape
        N = b.shape[1]
        split_k = 4
        bm = 128
        bn = 128
        bk = 32
        block = 1024
        k_per_split = triton.cdiv(triton.cdiv(K, split_k), bk) * bk
        ws = torch.empty((split_k, M, N), device=a.device, dtype=torch.float32)
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
        grid = (triton.cdiv(M, bm), triton.cdiv(N, bn), split_k)
        _mm_partial[grid](a, b, ws, M, N, K, k_per_split, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                          BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, UPCAST=_INTERPRETED, num_warps=8, num_stages=3)
        _sum_splits[(triton.cdiv(M * N, block),)](ws, c, M * N, SPLITS=split_k, BLOCK=block, num_warps=4)
        return c
