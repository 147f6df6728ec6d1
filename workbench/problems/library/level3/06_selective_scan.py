"""Selective state-space scan (Mamba-style), fp32. For each time step t:
h = exp(dt_t * A) * h + (dt_t * x_t) B_t ; y_t = h C_t + D * x_t, with input-dependent dt, B, C.
x, dt (4, 256, 512); A (512, 16); B, C (4, 256, 16). The reference loops over time.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORY = "scan"
DTYPE = "fp32"
TAGS = ('scan', 'recurrence', 'block')

BATCH, LENGTH, DIM, STATE = 4, 256, 512, 16
CPU_SIZES = {"BATCH": 2, "LENGTH": 9, "DIM": 12, "STATE": 4}


def flops():
    return 9 * BATCH * LENGTH * DIM * STATE


def bytes_moved():
    return (3 * BATCH * LENGTH * DIM + 2 * BATCH * LENGTH * STATE + DIM * STATE + DIM) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.A = nn.Parameter(-torch.rand(DIM, STATE) * 2 - 0.1)
        self.D = nn.Parameter(torch.randn(DIM) * 0.5)

    def forward(self, x, dt, Bm, Cm):
        b, l, d = x.shape
        h = x.new_zeros(b, d, self.A.shape[1])
        ys = []
        for t in range(l):
            dA = torch.exp(dt[:, t, :, None] * self.A)
            h = dA * h + (dt[:, t, :, None] * x[:, t, :, None]) * Bm[:, t, None, :]
            ys.append((h * Cm[:, t, None, :]).sum(-1) + self.D * x[:, t])
        return torch.stack(ys, dim=1)


def get_inputs():
    return [torch.randn(BATCH, LENGTH, DIM), F.softplus(torch.randn(BATCH, LENGTH, DIM)) * 0.1, torch.randn(BATCH, LENGTH, STATE), torch.randn(BATCH, LENGTH, STATE)]


def get_init_inputs():
    return []
