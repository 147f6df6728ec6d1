"""Fused add + LayerNorm + GELU in two passes over 1024-wide chunks of a row (statistics, then output; the second pass re-reads x and r, mostly from L2); 4 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _ln_gelu_chunks(x_ptr, r_ptr, w_ptr, b_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    """One row per program, two passes over BLOCK-wide chunks: sums of h and h*h (h = bf16(x + r)),
    then normalise, affine, round to bf16, erf GELU. The second pass re-reads x and r."""
    base = tl.program_id(0).to(tl.int64) * N
    s1 = tl.zeros((BLOCK,), tl.float32)
    s2 = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        m = offs < N
        h = tl.load(x_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
        h += tl.load(r_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
        h = h.to(tl.bfloat16).to(tl.float32)
        s1 += h
        s2 += h * h
    mean = tl.sum(s1, axis=0) / N
    var = tl.maximum(tl.sum(s2, axis=0) / N - mean * mean, 0.0)
    rstd = tl.rsqrt(var + eps)
    for c0 in range(0, N, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        m = offs < N
        h = tl.load(x_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
        h += tl.load(r_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
        h = h.to(tl.bfloat16).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=m, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=m, other=0.0).to(tl.float32)
        y = ((h - mean) * rstd * w + b).to(tl.bfloat16).to(tl.float32)
        g = 0.5 * y * (1.0 + tl.erf(y * 0.7071067811865476))
        tl.store(y_ptr + base + offs, g.to(tl.bfloat16), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name.
        self.ln = nn.LayerNorm(1)

    def forward(self, x, r):
        x = x.contiguous()
        r = r.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        _ln_gelu_chunks[(m,)](x, r, self.ln.weight, self.ln.bias, y, n, self.ln.eps,
                             BLOCK=1024, num_warps=4)
        return y
