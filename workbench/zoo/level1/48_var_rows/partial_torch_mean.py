"""Row variance (unbiased) split between Triton and torch: a Triton kernel (one program per row,
chunks of 2048 columns, 8 warps) computes each row's mean; torch finishes eagerly with
((x - mean[:, None]) ** 2).sum(1) / (N - 1), which writes and rereads a full-size temporary
(about 4x the traffic of a fused kernel, three more launches)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_mean(x_ptr, m_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * stride
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        acc += tl.load(base + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(m_ptr + row, tl.sum(acc, axis=0) / N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        mean = torch.empty((m,), device=x.device, dtype=torch.float32)
        _row_mean[(m,)](x, mean, n, x.stride(0), BLOCK=2048, num_warps=8)
        d = x.float() - mean[:, None]
        return (d.square_().sum(dim=1) / (n - 1)).to(x.dtype)
