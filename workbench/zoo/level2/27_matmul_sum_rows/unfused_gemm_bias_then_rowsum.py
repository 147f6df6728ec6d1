"""Unfused: a tiled GEMM kernel writes the full (M, N) product with the bias added (64 MB at full
size), then a row-sum kernel reads it back. The extra round trip is small next to the GEMM itself.
IEEE fp32 dots; tiles 128x64x32, group 8, 4 warps, 3 stages; row sums in chunks of 512."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _linear(x_ptr, w_ptr, b_ptr, c_ptr, M, N, K,
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
    tl.store(c_ptr + rm[:, None].to(tl.int64) * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _row_sum(c_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        acc += tl.load(c_ptr + row * N + offs, mask=offs < N, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder layer: the executor copies the reference's weights in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        x = x.contiguous()
        m, k = x.shape
        n = self.fc.weight.shape[0]
        c = torch.empty((m, n), device=x.device, dtype=x.dtype)
        bm = 128
        bn = 64
        grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
        _linear[grid](x, self.fc.weight.contiguous(), self.fc.bias, c, m, n, k,
                      BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=3)
        y = torch.empty((m,), device=x.device, dtype=x.dtype)
        _row_sum[(m,)](c, y, n, BLOCK=512, num_warps=4)
        return y
