"""Flat 1-D kernel over all M*N elements (4096 per program, 8 warps); scale and shift are
gathered with col = i % N, so no 2-D indexing and one program shape for any row length."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _scale_shift_flat(x_ptr, s_ptr, t_ptr, y_ptr, total, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    col = offs % N
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    s = tl.load(s_ptr + col, mask=mask, other=0.0)
    t = tl.load(t_ptr + col, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * s + t, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Shapes are placeholders: the executor copies the reference's parameters in by name.
        self.scale = nn.Parameter(torch.empty(1))
        self.shift = nn.Parameter(torch.empty(1))

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        total = x.numel()
        _scale_shift_flat[(triton.cdiv(total, 4096),)](x, self.scale, self.shift, y, total,
                                                      x.shape[-1], BLOCK=4096, num_warps=8)
        return y
