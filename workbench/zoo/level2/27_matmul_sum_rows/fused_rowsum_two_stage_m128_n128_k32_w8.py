"""Tiled GEMM x @ W^T with the bias add and the row sum fused into the epilogue: each (BLOCK_M x
BLOCK_N) tile reduces its rows to one partial per row, written to a (N tiles, M) workspace; a
second small kernel adds the partials in a fixed order (deterministic, no atomics). The (M, N)
product never reaches memory. IEEE fp32 dots; tiles 128x128x32, group 8, 8 warps, 3 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gemm_rowsum(x_ptr, w_ptr, b_ptr, ws_ptr, M, N, K,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(x_ptr + rm[:, None].to(tl.int64) * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * K + kk[:, None], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    part = tl.sum(acc, axis=1)
    tl.store(ws_ptr + pid_n.to(tl.int64) * M + rm, part, mask=rm < M)


@triton.jit
def _sum_partials(ws_ptr, y_ptr, M, T, BLOCK: tl.constexpr):
    rm = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for t in range(0, T):
        acc += tl.load(ws_ptr + t * M + rm, mask=rm < M, other=0.0)
    tl.store(y_ptr + rm, acc, mask=rm < M)


def gemm_rowsum(x, w, b, bm=64, bn=64, bk=32, group_m=8, warps=4, stages=2):
    x = x.contiguous()
    m, k = x.shape
    n = w.shape[0]
    tiles = triton.cdiv(n, bn)
    ws = torch.empty((tiles, m), device=x.device, dtype=torch.float32)
    _gemm_rowsum[(triton.cdiv(m, bm) * tiles,)](x, w.contiguous(), b, ws, m, n, k, BLOCK_M=bm, BLOCK_N=bn,
                                                BLOCK_K=bk, GROUP_M=group_m, num_warps=warps, num_stages=stages)
    y = torch.empty((m,), device=x.device, dtype=x.dtype)
    sb = 256
    _sum_partials[(triton.cdiv(m, sb),)](ws, y, m, tiles, BLOCK=sb, num_warps=2)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder layer: the executor copies the reference's weights in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        return gemm_rowsum(x, self.fc.weight, self.fc.bias, bm=128, bn=128, bk=32, group_m=8, warps=8, stages=3)
