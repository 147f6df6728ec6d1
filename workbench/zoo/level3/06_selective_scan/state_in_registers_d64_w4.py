"""The whole time loop in one kernel: each program keeps the state of 64 channels x STATE in registers and streams x, dt, B, C once."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _scan(x_ptr, dt_ptr, a_ptr, bm_ptr, cm_ptr, d_ptr, y_ptr, L, DIM, STATE: tl.constexpr, BLOCK_D: tl.constexpr):
    """One program per (batch, channel block); the state h (BLOCK_D x STATE) stays in registers over time."""
    pb = tl.program_id(0)
    pd = tl.program_id(1)
    rd = pd * BLOCK_D + tl.arange(0, BLOCK_D)
    rs = tl.arange(0, STATE)
    dm = rd < DIM
    A = tl.load(a_ptr + rd[:, None] * STATE + rs[None, :], mask=dm[:, None], other=0.0)
    Dv = tl.load(d_ptr + rd, mask=dm, other=0.0)
    h = tl.zeros((BLOCK_D, STATE), tl.float32)
    for t in range(L):
        off = (pb * L + t).to(tl.int64)
        x = tl.load(x_ptr + off * DIM + rd, mask=dm, other=0.0)
        dt = tl.load(dt_ptr + off * DIM + rd, mask=dm, other=0.0)
        bt = tl.load(bm_ptr + off * STATE + rs)
        ct = tl.load(cm_ptr + off * STATE + rs)
        h = tl.exp(dt[:, None] * A) * h + (dt * x)[:, None] * bt[None, :]
        y = tl.sum(h * ct[None, :], axis=1) + Dv * x
        tl.store(y_ptr + off * DIM + rd, y, mask=dm)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters in by name.
        self.A = nn.Parameter(torch.empty(0))
        self.D = nn.Parameter(torch.empty(0))

    def forward(self, x, dt, Bm, Cm):
        b, l, d = x.shape
        st = self.A.shape[1]
        y = torch.empty_like(x)
        _scan[(b, triton.cdiv(d, 64))](x.contiguous(), dt.contiguous(), self.A.contiguous(), Bm.contiguous(), Cm.contiguous(), self.D, y, l, d, STATE=st, BLOCK_D=64, num_warps=4)
        return y
