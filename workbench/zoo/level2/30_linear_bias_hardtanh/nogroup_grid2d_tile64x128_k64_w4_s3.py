"""Linear + bias + hardtanh(-1, 1) fused into the fp32 GEMM epilogue (ieee dots) on a plain 2-D
launch grid (axis 0: tile row, axis 1: tile column; no L2 grouping); tiles 64x128x64, 4 warps, 3 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _linear_hardtanh_2d(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sxm, sxk, swn, swk, sym, syn,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Tile (program_id(0), program_id(1)) of y = clamp(x @ w.T + b, -1, 1)."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = x_ptr + rm.to(tl.int64)[:, None] * sxm + rk[None, :] * sxk
    w_ptrs = w_ptr + rn.to(tl.int64)[None, :] * swn + rk[:, None] * swk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k0 < K), other=0.0)
        w = tl.load(w_ptrs, mask=(rk[:, None] + k0 < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
        a_ptrs += BLOCK_K * sxk
        w_ptrs += BLOCK_K * swk
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    y = tl.clamp(acc + bias[None, :], -1.0, 1.0)
    tl.store(y_ptr + rm.to(tl.int64)[:, None] * sym + rn[None, :] * syn, y,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder layer: the executor copies the reference's weights in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        w, b = self.fc.weight, self.fc.bias
        m, k = x.shape
        n = w.shape[0]
        y = torch.empty((m, n), device=x.device, dtype=x.dtype)
        block_m = 64
        block_n = 128
        grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
        _linear_hardtanh_2d[grid](x, w, b, y, m, n, k, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                                  y.stride(0), y.stride(1), BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=64,
                                  num_warps=4, num_stages=3)
        return y
