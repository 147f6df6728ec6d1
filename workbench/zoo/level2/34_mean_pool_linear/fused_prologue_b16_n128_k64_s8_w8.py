"""One fused kernel: a GEMM whose A operand is the mean-pooled input, pooled on the fly in the
prologue. Each program owns a (16 batch rows x 128 outputs) tile; for every 64-wide K step it
sums (16 x 8 x 64) blocks of x down the whole sequence (a 3-D load reduced over the sequence
axis), divides by S and multiplies by the W^T tile (IEEE fp32 dot); the bias is fused.
x is re-read once per N tile (the programs sharing a batch block run together, so mostly from
L2). bb=16, bn=128, bk=64, bs=8, 8 warps, 2 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _pool_linear(x_ptr, w_ptr, bias_ptr, y_ptr, B, S, D, N,
                 BLOCK_B: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_S: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_b = tl.program_id(1)
    rb = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rs = tl.arange(0, BLOCK_S)
    x_rows = x_ptr + rb.to(tl.int64)[:, None, None] * S * D
    bmask = rb[:, None, None] < B
    acc = tl.zeros((BLOCK_B, BLOCK_N), tl.float32)
    for k0 in range(0, D, BLOCK_K):
        kk = k0 + rk
        a = tl.zeros((BLOCK_B, BLOCK_K), tl.float32)
        for s0 in range(0, S, BLOCK_S):
            ss = s0 + rs
            m = bmask & (ss[None, :, None] < S) & (kk[None, None, :] < D)
            tile = tl.load(x_rows + ss[None, :, None] * D + kk[None, None, :], mask=m, other=0.0)
            a += tl.sum(tile, axis=1)
        a = a / S
        w = tl.load(w_ptr + rn[None, :] * D + kk[:, None], mask=(kk[:, None] < D) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(y_ptr + rb[:, None] * N + rn[None, :], acc, mask=(rb[:, None] < B) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        x = x.contiguous()
        b, s, d = x.shape
        n = self.fc.weight.shape[0]
        y = torch.empty((b, n), device=x.device, dtype=torch.float32)
        bb = 16
        bn = 128
        _pool_linear[(triton.cdiv(n, bn), triton.cdiv(b, bb))](x, self.fc.weight.contiguous(), self.fc.bias, y, b, s, d, n,
                                                               BLOCK_B=bb, BLOCK_N=bn, BLOCK_K=64, BLOCK_S=8,
                                                               num_warps=8, num_stages=2)
        return y
