"""Pooling fused into a split-K GEMM, x read exactly once: each program owns (16 batch rows x one
32-wide slice of D), pools its (16 x 32) A tile over the whole sequence with (16 x 16 x 32)
3-D loads, divides by S, then sweeps all N in 128-wide tiles, writing A_tile @ W^T[slice] as an
fp32 partial product per K slice (IEEE fp32 dots, 4 warps, 2 stages). A second flat kernel adds
the D/32 partials and the bias (blocks of 1024, 4 warps); deterministic, no atomics."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _pool_splitk(x_ptr, w_ptr, part_ptr, B, S, D, N,
                 BLOCK_B: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_S: tl.constexpr):
    pid_b = tl.program_id(0)
    pid_k = tl.program_id(1)
    rb = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    kk = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    rs = tl.arange(0, BLOCK_S)
    x_rows = x_ptr + rb.to(tl.int64)[:, None, None] * S * D
    bk_mask = (rb[:, None, None] < B) & (kk[None, None, :] < D)
    a = tl.zeros((BLOCK_B, BLOCK_K), tl.float32)
    for s0 in range(0, S, BLOCK_S):
        ss = s0 + rs
        tile = tl.load(x_rows + ss[None, :, None] * D + kk[None, None, :], mask=bk_mask & (ss[None, :, None] < S), other=0.0)
        a += tl.sum(tile, axis=1)
    a = a / S
    out = part_ptr + pid_k.to(tl.int64) * B * N
    for n0 in range(0, N, BLOCK_N):
        rn = n0 + tl.arange(0, BLOCK_N)
        w = tl.load(w_ptr + rn[None, :] * D + kk[:, None], mask=(kk[:, None] < D) & (rn[None, :] < N), other=0.0)
        p = tl.dot(a, w, input_precision="ieee")
        tl.store(out + rb[:, None] * N + rn[None, :], p, mask=(rb[:, None] < B) & (rn[None, :] < N))


@triton.jit
def _sum_partials_bias(part_ptr, bias_ptr, y_ptr, total, N, KSPLIT, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    acc = tl.load(bias_ptr + offs % N, mask=m, other=0.0)
    for i in range(0, KSPLIT):
        acc += tl.load(part_ptr + i * total + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, acc, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        x = x.contiguous()
        b, s, d = x.shape
        n = self.fc.weight.shape[0]
        bb = 16
        bk = 32
        ksplit = triton.cdiv(d, bk)
        part = torch.empty((ksplit, b, n), device=x.device, dtype=torch.float32)
        _pool_splitk[(triton.cdiv(b, bb), ksplit)](x, self.fc.weight.contiguous(), part, b, s, d, n,
                                                   BLOCK_B=bb, BLOCK_K=bk, BLOCK_N=128, BLOCK_S=16,
                                                   num_warps=4, num_stages=2)
        y = torch.empty((b, n), device=x.device, dtype=torch.float32)
        total = b * n
        eb = 1024
        _sum_partials_bias[(triton.cdiv(total, eb),)](part, self.fc.bias, y, total, n, ksplit, BLOCK=eb, num_warps=4)
        return y
