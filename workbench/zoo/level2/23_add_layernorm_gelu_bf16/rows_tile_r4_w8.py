"""Fully fused add + LayerNorm + GELU: each program holds a 4-row tile of whole rows in registers (a quarter as many programs, four times the registers each); 8 warps."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _ln_gelu_rows(x_ptr, r_ptr, w_ptr, b_ptr, y_ptr, M, N, eps, HAS_RES: tl.constexpr,
                  ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """ROWS whole rows per program held in registers (BLOCK >= N): h = bf16(x + r), centred
    variance, y = bf16(LN(h) * w + b), out = bf16(gelu_erf(y)). Statistics in fp32."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    h = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if HAS_RES:
        h += tl.load(r_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        h = h.to(tl.bfloat16).to(tl.float32)  # the reference rounds x + r to bf16
    mean = tl.sum(h, axis=1) / N
    d = tl.where(mask, h - mean[:, None], 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, axis=1) / N + eps)
    w = tl.load(w_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    y = (d * rstd[:, None] * w[None, :] + b[None, :]).to(tl.bfloat16).to(tl.float32)
    g = 0.5 * y * (1.0 + tl.erf(y * 0.7071067811865476))
    tl.store(y_ptr + offs, g.to(tl.bfloat16), mask=mask)


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
        _ln_gelu_rows[(triton.cdiv(m, 4),)](x, r, self.ln.weight, self.ln.bias, y, m, n, self.ln.eps,
                                            HAS_RES=True, ROWS=4, BLOCK=triton.next_power_of_2(n), num_warps=8)
        return y
