"""Algebraic rewrite: sum_n (x @ W^T + b)[m, n] = x[m] . W.sum(0) + b.sum(). A column-sum kernel
reduces W (N, K) to a K-vector (plus the bias sum, stored after it), then a matvec kernel streams x
once: each program takes ROWS rows and loops over K in chunks. Memory bound (x read once, about
70 MB), no GEMM at all. Column sums over 32-wide column strips in 64-row chunks; matvec 16 rows x
256 columns, 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _col_sums(w_ptr, b_ptr, v_ptr, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_K + tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_N, BLOCK_K), tl.float32)
    for n0 in range(0, N, BLOCK_N):
        rows = n0 + tl.arange(0, BLOCK_N)
        acc += tl.load(w_ptr + rows[:, None] * K + cols[None, :], mask=(rows[:, None] < N) & (cols[None, :] < K), other=0.0)
    tl.store(v_ptr + cols, tl.sum(acc, axis=0), mask=cols < K)
    if pid == 0:
        bacc = tl.zeros((BLOCK_N,), tl.float32)
        for n0 in range(0, N, BLOCK_N):
            rows = n0 + tl.arange(0, BLOCK_N)
            bacc += tl.load(b_ptr + rows, mask=rows < N, other=0.0)
        tl.store(v_ptr + K, tl.sum(bacc, axis=0))


@triton.jit
def _matvec(x_ptr, v_ptr, y_ptr, M, K, ROWS: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    acc = tl.zeros((ROWS, BLOCK_K), tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + rm[:, None].to(tl.int64) * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        v = tl.load(v_ptr + kk, mask=kk < K, other=0.0)
        acc += x * v[None, :]
    y = tl.sum(acc, axis=1) + tl.load(v_ptr + K)
    tl.store(y_ptr + rm, y, mask=rm < M)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder layer: the executor copies the reference's weights in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        x = x.contiguous()
        m, k = x.shape
        w = self.fc.weight.contiguous()
        n = w.shape[0]
        v = torch.empty((k + 1,), device=x.device, dtype=torch.float32)
        ck = 32
        _col_sums[(triton.cdiv(k, ck),)](w, self.fc.bias, v, n, k, BLOCK_N=64, BLOCK_K=ck, num_warps=4)
        y = torch.empty((m,), device=x.device, dtype=x.dtype)
        rows = 16
        _matvec[(triton.cdiv(m, rows),)](x, v, y, m, k, ROWS=rows, BLOCK_K=256, num_warps=4)
        return y
