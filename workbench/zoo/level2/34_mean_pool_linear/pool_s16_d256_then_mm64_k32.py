"""Two kernels: a mean-pool kernel (one program per (batch row, 256-wide slice of D), summing
16 x 256 tiles down the sequence into a 2-D fp32 accumulator, 4 warps), then a tiled GEMM
pooled @ W^T with the bias add fused (bm=64, bn=64, bk=32, 4 warps, 3 stages, IEEE fp32 dots)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _mean_pool(x_ptr, y_ptr, S, D, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    pd = tl.program_id(1)
    rd = pd * BLOCK_D + tl.arange(0, BLOCK_D)
    dm = rd < D
    base = x_ptr + b.to(tl.int64) * S * D
    acc = tl.zeros((BLOCK_S, BLOCK_D), tl.float32)
    for s0 in range(0, S, BLOCK_S):
        rs = s0 + tl.arange(0, BLOCK_S)
        acc += tl.load(base + rs[:, None] * D + rd[None, :], mask=(rs[:, None] < S) & dm[None, :], other=0.0)
    tl.store(y_ptr + b.to(tl.int64) * D + rd, tl.sum(acc, axis=0) / S, mask=dm)


@triton.jit
def _linear(a_ptr, w_ptr, bias_ptr, y_ptr, M, N, K,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * K + kk[:, None], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def mean_pool(x, bs=16, bd=256, warps=4):
    b, s, d = x.shape
    y = torch.empty((b, d), device=x.device, dtype=torch.float32)
    _mean_pool[(b, triton.cdiv(d, bd))](x, y, s, d, BLOCK_S=bs, BLOCK_D=bd, num_warps=warps)
    return y


def linear(a, weight, bias, bm=64, bn=64, bk=32, warps=4, stages=3):
    m, k = a.shape
    n = weight.shape[0]
    y = torch.empty((m, n), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
    _linear[grid](a, weight, bias, y, m, n, k, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                  num_warps=warps, num_stages=stages)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        pooled = mean_pool(x.contiguous(), bs=16, bd=256, warps=4)
        return linear(pooled, self.fc.weight.contiguous(), self.fc.bias, bm=64, bn=64, bk=32, warps=4, stages=3)
