"""Fused single pass with whole score rows resident in registers: each program computes a 16 x S
block of scores (S rounded up to a power of two, all keys at once) by looping over the head
dimension in chunks of BLOCK_D (fp16 tensor-core dots, fp32 accumulate), then takes the row max
and sum and writes the probabilities in fp16. No recompute, but large register tiles and all of
k streamed (from L2) for every 16 query rows. 8 warps, 2 stages."""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

# Triton's CPU interpreter computes fp16 dots wrongly; only there are the operands upcast.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _qk_softmax_rows(q_ptr, k_ptr, y_ptr, S, D, BLOCK_M: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr,
                     UPCAST: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rs = tl.arange(0, BLOCK_S)
    acc = tl.zeros((BLOCK_M, BLOCK_S), tl.float32)
    for d0 in range(0, D, BLOCK_D):
        rd = d0 + tl.arange(0, BLOCK_D)
        q = tl.load(q_ptr + bh * S * D + rm[:, None] * D + rd[None, :], mask=(rm[:, None] < S) & (rd[None, :] < D), other=0.0)
        kt = tl.load(k_ptr + bh * S * D + rs[None, :] * D + rd[:, None], mask=(rs[None, :] < S) & (rd[:, None] < D), other=0.0)
        if UPCAST:
            acc += tl.dot(q.to(tl.float32), kt.to(tl.float32))
        else:
            acc += tl.dot(q, kt)
    s = tl.where(rs[None, :] < S, acc, -float("inf"))
    mx = tl.max(s, axis=1)
    e = tl.exp(s - mx[:, None])
    p = e * (1.0 / tl.sum(e, axis=1))[:, None]
    tl.store(y_ptr + bh * S * S + rm[:, None] * S + rs[None, :], p.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < S) & (rs[None, :] < S))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k):
        b, s, d = q.shape
        q = q.contiguous()
        k = k.contiguous()
        y = torch.empty((b, s, s), device=q.device, dtype=q.dtype)
        bm = 16
        _qk_softmax_rows[(triton.cdiv(s, bm), b)](q, k, y, s, d, BLOCK_M=bm, BLOCK_S=triton.next_power_of_2(s),
                                                  BLOCK_D=32, UPCAST=_INTERPRETED, num_warps=8, num_stages=2)
        return y
