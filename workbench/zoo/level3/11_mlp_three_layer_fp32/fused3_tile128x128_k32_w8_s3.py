"""Three Triton GEMMs, bias and ReLU fused into each epilogue (exact fp32 FMA dots); tiles 128x128x32, group 8, 8 warps, 3 stages for all layers."""
import math
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


# Triton's CPU interpreter computes bf16 dots wrongly; only there are the operands upcast.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"

@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, bias_ptr, res_ptr, M, N, K,
            sab, sam, sak, sbb, sbk, sbn, scb, scm, scn, srb, srm, srn,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
            BIAS_ON: tl.constexpr, ACT: tl.constexpr, HAS_RES: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr):
    pid = tl.program_id(0)
    bid = tl.program_id(1)
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
    a_base = a_ptr + bid * sab
    b_base = b_ptr + bid * sbb
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_base + rm[:, None] * sam + kk[None, :] * sak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_base + kk[:, None] * sbk + rn[None, :] * sbn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if IEEE:
            acc += tl.dot(a, b, input_precision="ieee")
        elif UPCAST:
            acc += tl.dot(a.to(tl.float32), b.to(tl.float32))
        else:
            acc += tl.dot(a, b)
    if BIAS_ON == 1:
        acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    if BIAS_ON == 2:
        acc += tl.load(bias_ptr + rm, mask=rm < M, other=0.0).to(tl.float32)[:, None]
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    if HAS_RES:
        acc += tl.load(res_ptr + bid * srb + rm[:, None] * srm + rn[None, :] * srn, mask=cmask, other=0.0).to(tl.float32)
    if ACT == 1:
        acc = tl.maximum(acc, 0.0)
    if ACT == 2:
        inner = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
        acc = 0.5 * acc * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    if ACT == 3:
        acc = acc * tl.sigmoid(acc)
    tl.store(c_ptr + bid * scb + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty), mask=cmask)


def matmul(a, b, bias=None, act=0, res=None, bias_on=1, out_dtype=None, bm=64, bn=64, bk=32, group_m=8, warps=4, stages=2):
    """C = a @ b for 2-D or batched 3-D views (any strides); fp32 inputs use full-precision dots."""
    batched = a.dim() == 3 or b.dim() == 3
    a3 = a if a.dim() == 3 else a.unsqueeze(0)
    b3 = b if b.dim() == 3 else b.unsqueeze(0)
    nb = max(a3.shape[0], b3.shape[0])
    M, K = a3.shape[1], a3.shape[2]
    N = b3.shape[2]
    c = torch.empty((nb, M, N), device=a.device, dtype=out_dtype or a.dtype)
    sab = a3.stride(0) if a3.shape[0] > 1 else 0
    sbb = b3.stride(0) if b3.shape[0] > 1 else 0
    r3 = None if res is None else (res if res.dim() == 3 else res.unsqueeze(0))
    rs = (0, 0, 0) if r3 is None else ((r3.stride(0) if r3.shape[0] > 1 else 0), r3.stride(1), r3.stride(2))
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn), nb)
    _matmul[grid](a3, b3, c, bias if bias is not None else c, r3 if r3 is not None else c, M, N, K,
                  sab, a3.stride(1), a3.stride(2), sbb, b3.stride(1), b3.stride(2),
                  c.stride(0), c.stride(1), c.stride(2), rs[0], rs[1], rs[2],
                  BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m,
                  BIAS_ON=0 if bias is None else bias_on, ACT=act, HAS_RES=res is not None,
                  IEEE=a.dtype == torch.float32, UPCAST=_INTERPRETED, num_warps=warps, num_stages=stages)
    return c if batched else c[0]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder layers: the executor copies the reference's weights in by name.
        self.fc1 = nn.Linear(1, 1)
        self.fc2 = nn.Linear(1, 1)
        self.fc3 = nn.Linear(1, 1)

    def forward(self, x):
        h = matmul(x, self.fc1.weight.t(), bias=self.fc1.bias, act=1, bm=128, bn=128, bk=32, group_m=8, warps=8, stages=3)
        h = matmul(h, self.fc2.weight.t(), bias=self.fc2.bias, act=1, bm=128, bn=128, bk=32, group_m=8, warps=8, stages=3)
        return matmul(h, self.fc3.weight.t(), bias=self.fc3.bias, act=0, bm=128, bn=128, bk=32, group_m=8, warps=8, stages=3)
