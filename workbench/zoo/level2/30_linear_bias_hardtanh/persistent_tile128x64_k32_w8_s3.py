"""Persistent fp32 GEMM with a fused bias + hardtanh(-1, 1) epilogue (ieee dots): a fixed grid of
at most 132 programs (one per H100 SM) walks the output tiles in strides, grouped tile order
(group 8); tiles 128x64x32, 8 warps, 3 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _linear_hardtanh_persistent(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sxm, sxk, swn, swk, sym, syn,
                                n_programs, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """Program p computes tiles p, p + n_programs, ... of y = clamp(x @ w.T + b, -1, 1)."""
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    rk = tl.arange(0, BLOCK_K)
    for tile in range(tl.program_id(0), num_m * num_n, n_programs):
        first_m = (tile // per_group) * GROUP_M
        rows_here = tl.minimum(num_m - first_m, GROUP_M)
        pid_m = first_m + (tile % per_group) % rows_here
        pid_n = (tile % per_group) // rows_here
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            kk = k0 + rk
            a = tl.load(x_ptr + rm.to(tl.int64)[:, None] * sxm + kk[None, :] * sxk,
                        mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
            w = tl.load(w_ptr + rn.to(tl.int64)[None, :] * swn + kk[:, None] * swk,
                        mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(a, w, input_precision="ieee")
        acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
        acc = tl.minimum(tl.maximum(acc, -1.0), 1.0)
        tl.store(y_ptr + rm.to(tl.int64)[:, None] * sym + rn[None, :] * syn, acc,
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
        block_m = 128
        block_n = 64
        tiles = triton.cdiv(m, block_m) * triton.cdiv(n, block_n)
        programs = min(tiles, 132)
        _linear_hardtanh_persistent[(programs,)](x, w, b, y, m, n, k, x.stride(0), x.stride(1),
                                                 w.stride(0), w.stride(1), y.stride(0), y.stride(1), programs,
                                                 BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=32, GROUP_M=8,
                                                 num_warps=8, num_stages=3)
        return y
