"""Fused GEMM + bias + row sum in one kernel, no workspace: each program owns BLOCK_M rows of x and
walks every BLOCK_N column tile of W itself (an inner K loop per tile), folding each finished tile
into a per-row running sum. Only M / BLOCK_M programs (128 at full size, about one wave), x tiles
re-read from L2 for every column tile. IEEE fp32 dots; tiles 64x128x32, 4 warps, 2 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gemm_rowsum_rows(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rk = tl.arange(0, BLOCK_K)
    x_rows = x_ptr + rm[:, None].to(tl.int64) * K
    total = tl.zeros((BLOCK_M,), tl.float32)
    for n0 in range(0, N, BLOCK_N):
        rn = n0 + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            kk = k0 + rk
            a = tl.load(x_rows + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
            b = tl.load(w_ptr + rn[None, :] * K + kk[:, None], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(a, b, input_precision="ieee")
        acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
        total += tl.sum(acc, axis=1)
    tl.store(y_ptr + rm, total, mask=rm < M)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder layer: the executor copies the reference's weights in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        x = x.contiguous()
        m, k = x.shape
        n = self.fc.weight.shape[0]
        y = torch.empty((m,), device=x.device, dtype=x.dtype)
        bm = 64
        _gemm_rowsum_rows[(triton.cdiv(m, bm),)](x, self.fc.weight.contiguous(), self.fc.bias, y, m, n, k,
                                                 BLOCK_M=bm, BLOCK_N=128, BLOCK_K=32, num_warps=4, num_stages=2)
        return y
