"""Two kernels: a wide mean-pool kernel (one program per (batch row, 1024-wide slice of D), i.e. a
whole row at the default width, summing 8 x 1024 tiles down the sequence, 8 warps), then a tiled
GEMM pooled @ W^T with fused bias shaped for the short M: bm=32, bn=128, bk=64, 4 warps,
3 stages, IEEE fp32 dots."""
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
    acc = tl.zeros((BLOCK_D,), tl.float32)
    for s0 in range(0, S, BLOCK_S):
        rs = s0 + tl.arange(0, BLOCK_S)
        tile = tl.load(base + rs[:, None] * D + rd[None, :], mask=(rs[:, None] < S) & dm[None, :], other=0.0)
        acc += tl.sum(tile, axis=0)
    tl.store(y_ptr + b.to(tl.int64) * D + rd, acc / S, mask=dm)


@triton.jit
def _linear(a_ptr, w_ptr, bias_ptr, y_ptr, M, N, K,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    w_ptrs = w_ptr + rn[None, :] * K + rk[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k0), other=0.0)
        w = tl.load(w_ptrs, mask=(rk[:, None] < K - k0) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
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
        bd = 1024
        _mean_pool[(b, triton.cdiv(d, bd))](x, pooled, s, d, BLOCK_S=8, BLOCK_D=bd, num_warps=8)
        y = torch.empty((b, n), device=x.device, dtype=torch.float32)
        bm = 32
        bn = 128
        _linear[(triton.cdiv(n, bn), triton.cdiv(b, bm))](pooled, self.fc.weight.contiguous(), self.fc.bias, y, b, n, d,
                                                          BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=64, num_warps=4, num_stages=3)
        return y
