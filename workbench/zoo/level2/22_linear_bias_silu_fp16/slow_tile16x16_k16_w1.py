"""Linear + bias + SiLU fused into the fp16 GEMM epilogue; deliberately tiny 16x16x16 tiles, 1 warp, 1 stage: slow."""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


# Triton's CPU interpreter computes fp16/bf16 dots wrongly; only there are the operands upcast.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _linear_act(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sxm, sxk, swn, swk, sym, syn,
                ACT: tl.constexpr, UPCAST: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """One (BLOCK_M, BLOCK_N) tile of y = act(x @ w.T + b); fp32 accumulator, grouped tile order.
    ACT 0: bias only, 1: bias then silu."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * sxm + kk[None, :] * sxk,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * swn + kk[:, None] * swk,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if UPCAST:
            acc += tl.dot(a.to(tl.float32), w.to(tl.float32))
        else:
            acc += tl.dot(a, w)
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    if ACT == 1:
        acc = acc * tl.sigmoid(acc)
    tl.store(y_ptr + rm[:, None] * sym + rn[None, :] * syn, acc.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def linear_act(x, w, b, act=1, bm=64, bn=64, bk=32, group_m=8, warps=4, stages=2):
    m, k = x.shape
    n = w.shape[0]
    y = torch.empty((m, n), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    _linear_act[grid](x, w, b, y, m, n, k, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                      y.stride(0), y.stride(1), ACT=act, UPCAST=_INTERPRETED,
                      BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m, num_warps=warps, num_stages=stages)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder layer: the executor copies the reference's weights in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        return linear_act(x, self.fc.weight, self.fc.bias, act=1, bm=16, bn=16, bk=16, group_m=1, warps=1, stages=1)
