"""Deliberately slow batched fp32 matmul: 16x16 output tiles, BLOCK_K=16, a single warp, no
software pipelining (num_stages=1), ieee dots (no TF32); grid (M-tiles, N-tiles, batch). Correct
but with little reuse of each loaded operand tile."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bmm_small(a_ptr, b_ptr, c_ptr, M, N, K,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    bid = tl.program_id(2).to(tl.int64)
    rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + bid * M * K + rm[:, None] * K + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + bid * K * N + kk[:, None] * N + rn[None, :],
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + bid * M * N + rm[:, None] * N + rn[None, :], acc, mask=cmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        a = a.contiguous()
        b = b.contiguous()
        nb, m, k = a.shape
        n = b.shape[2]
        bm = 16
        bn = 16
        bk = 16
        c = torch.empty((nb, m, n), device=a.device, dtype=a.dtype)
        grid = (triton.cdiv(m, bm), triton.cdiv(n, bn), nb)
        _bmm_small[grid](a, b, c, m, n, k, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=1, num_stages=1)
        return c
