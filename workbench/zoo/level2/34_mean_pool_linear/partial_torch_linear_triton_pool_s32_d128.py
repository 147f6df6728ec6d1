"""PARTIAL candidate: only the mean pooling is a Triton kernel (one program per (batch row,
128-wide slice of D), summing 32 x 128 tiles down the sequence, 4 warps); the linear layer
(GEMM and bias) runs in PyTorch/cuBLAS."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _mean_pool(x_ptr, y_ptr, S, D, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    pd = tl.program_id(1)
    rd = pd * BLOCK_D + tl.arange(0, BLOCK_D)
    dm = rd < D
    base = x_ptr + b.to(tl.int64) * S * D
    acc = tl.zeros((BLOCK_S, BLOCK_D), tl.float32)
    for s0 in range(0, S, BLOCK_S):
        rs = s0 + tl.arange(0, BLOCK_S)
        acc += tl.load(base + rs[:, None] * D + rd[None, :], mask=(rs[:, None] < S) & dm[None, :], other=0.0)
    tl.store(y_ptr + b.to(tl.int64) * D + rd, tl.sum(acc, axis=0) / S, mask=dm)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        x = x.contiguous()
        b, s, d = x.shape
        pooled = torch.empty((b, d), device=x.device, dtype=torch.float32)
        bd = 128
        _mean_pool[(b, triton.cdiv(d, bd))](x, pooled, s, d, BLOCK_S=32, BLOCK_D=bd, num_warps=4)
        return F.linear(pooled, self.fc.weight, self.fc.bias)
