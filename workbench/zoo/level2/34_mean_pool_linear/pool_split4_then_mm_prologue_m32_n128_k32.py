"""Split-sequence pooling with the final reduction folded into the GEMM prologue: kernel 1 sums a
quarter of the sequence (SPLIT_S=4 programs per (batch row, 256-wide D slice), 16 x 256 tiles,
4 warps) into fp32 partial sums; kernel 2 is a GEMM whose A tile is built by adding the SPLIT_S
partials and dividing by S as it is loaded, then multiplied by W^T with the bias fused
(bm=32, bn=128, bk=32, 4 warps, 3 stages, IEEE fp32 dots). More programs in flight for the
bandwidth-bound pooling than one program per row slice."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _pool_partial(x_ptr, part_ptr, B, S, D, SPLIT_S: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    pd = tl.program_id(1)
    sp = tl.program_id(2)
    rd = pd * BLOCK_D + tl.arange(0, BLOCK_D)
    dm = rd < D
    rows = tl.cdiv(S, SPLIT_S)
    s_lo = sp * rows
    s_hi = tl.minimum(s_lo + rows, S)
    base = x_ptr + b.to(tl.int64) * S * D
    acc = tl.zeros((BLOCK_S, BLOCK_D), tl.float32)
    for s0 in range(s_lo, s_hi, BLOCK_S):
        rs = s0 + tl.arange(0, BLOCK_S)
        acc += tl.load(base + rs[:, None] * D + rd[None, :], mask=(rs[:, None] < s_hi) & dm[None, :], other=0.0)
    tl.store(part_ptr + (sp * B + b).to(tl.int64) * D + rd, tl.sum(acc, axis=0), mask=dm)


@triton.jit
def _linear_from_partials(part_ptr, w_ptr, bias_ptr, y_ptr, M, N, K, S, SPLIT_S: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        am = (rm[:, None] < M) & (kk[None, :] < K)
        a = tl.zeros((BLOCK_M, BLOCK_K), tl.float32)
        for sp in tl.static_range(SPLIT_S):
            a += tl.load(part_ptr + (sp * M + rm[:, None]) * K + kk[None, :], mask=am, other=0.0)
        a = a / S
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
        split = 4
        part = torch.empty((split, b, d), device=x.device, dtype=torch.float32)
        bd = 256
        _pool_partial[(b, triton.cdiv(d, bd), split)](x, part, b, s, d, SPLIT_S=split, BLOCK_S=16, BLOCK_D=bd,
                                                     num_warps=4)
        y = torch.empty((b, n), device=x.device, dtype=torch.float32)
        bm = 32
        bn = 128
        _linear_from_partials[(triton.cdiv(b, bm), triton.cdiv(n, bn))](part, self.fc.weight.contiguous(), self.fc.bias, y,
                                                                        b, n, d, s, SPLIT_S=split, BLOCK_M=bm, BLOCK_N=bn,
                                                                        BLOCK_K=32, num_warps=4, num_stages=3)
        return y
