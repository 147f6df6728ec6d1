"""Deliberately slow: a mean-pool kernel that walks the sequence one row at a time over 32-wide
slices of D (1 warp, a serial loop of S tiny loads), then a GEMM with 16 x 16 x 16 tiles,
1 warp, 1 stage, bias fused; IEEE fp32 dots. Correct, just badly shaped for the GPU."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _mean_pool(x_ptr, y_ptr, S, D, BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    pd = tl.program_id(1)
    rd = pd * BLOCK_D + tl.arange(0, BLOCK_D)
    dm = rd < D
    base = x_ptr + b.to(tl.int64) * S * D
    acc = tl.zeros((BLOCK_D,), tl.float32)
    for s in range(0, S):
        acc += tl.load(base + s * D + rd, mask=dm, other=0.0)
    tl.store(y_ptr + b.to(tl.int64) * D + rd, acc / S, mask=dm)


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


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        x = x.contiguous()
        b, s, d = x.shape
        n = self.fc.weight.shape[0]
        pooled = torch.empty((b, d), device=x.device, dtype=torch.float32)
        bd = 32
        _mean_pool[(b, triton.cdiv(d, bd))](x, pooled, s, d, BLOCK_D=bd, num_warps=1)
        y = torch.empty((b, n), device=x.device, dtype=torch.float32)
        bm = 16
        bn = 16
        _linear[(triton.cdiv(b, bm), triton.cdiv(n, bn))](pooled, self.fc.weight.contiguous(), self.fc.bias, y, b, n, d,
                                                          BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=16, num_warps=1, num_stages=1)
        return y
