"""KL-divergence (batchmean) with the reduction left to PyTorch: an elementwise Triton kernel
(flat blocks of 1024, 4 warps) writes the full fp32 pointwise map p * log p - p * log_q (0 where
p == 0), then torch sums it and divides by B. An extra write and read of B*N floats and two
torch kernels compared with a fused reduction."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _kl_map(lq_ptr, p_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    lq = tl.load(lq_ptr + offs, mask=m, other=0.0)
    p = tl.load(p_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, p * tl.log(tl.where(p > 0, p, 1.0)) - p * lq, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_q, p):
        lq = log_q.contiguous()
        pp = p.contiguous()
        n = lq.numel()
        block = 1024
        pointwise = torch.empty_like(lq)
        _kl_map[(triton.cdiv(n, block),)](lq, pp, pointwise, n, BLOCK=block, num_warps=4)
        return pointwise.sum() / lq.shape[0]
