"""Linear + bias + hardtanh(-1, 1) fused into the fp32 GEMM epilogue (ieee dots); small tiles 64x64x32, grouped tile order (group 8), 4 warps, 2 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _linear_hardtanh(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sxm, sxk, swn, swk, sym, syn,
                     LO: tl.constexpr, HI: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """One (BLOCK_M, BLOCK_N) tile of y = clamp(x @ w.T + b, LO, HI). Tiles are visited in groups
    of GROUP_M tile rows so neighbouring programs share W tiles in L2; fp32 operands use
    full-precision (ieee) dots, as the reference does not use TF32."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    rows_here = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows_here
    pid_n = (pid % per_group) // rows_here
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    m_ok = rm < M
    n_ok = rn < N
    x_rows = x_ptr + rm.to(tl.int64)[:, None] * sxm
    w_cols = w_ptr + rn.to(tl.int64)[None, :] * swn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        k_ok = kk < K
        a = tl.load(x_rows + kk[None, :] * sxk, mask=m_ok[:, None] & k_ok[None, :], other=0.0)
        w = tl.load(w_cols + kk[:, None] * swk, mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=n_ok, other=0.0)[None, :]
    acc = tl.minimum(tl.maximum(acc, LO), HI)
    tl.store(y_ptr + rm.to(tl.int64)[:, None] * sym + rn[None, :] * syn, acc,
             mask=m_ok[:, None] & n_ok[None, :])


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
        grid = (triton.cdiv(m, 64) * triton.cdiv(n, 64),)
        _linear_hardtanh[grid](x, w, b, y, m, n, k, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                               y.stride(0), y.stride(1), LO=-1.0, HI=1.0,
                               BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=2)
        return y
