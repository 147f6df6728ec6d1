"""Implicit-GEMM 3x3 convolution with rows = pooled pixels across the whole batch and columns =
output channels, four accumulators (one per 2x2 window position): per K step the weight tile
(BLOCK_K x BLOCK_CO) is loaded once and the four shifted input patches (BLOCK_Q x BLOCK_K) are
gathered for four dots. Epilogue: max of the four, + bias, ReLU; only the pooled output is
written. IEEE fp32 dots; bq=32 pooled pixels, bco=128, bk=32, 8 warps, 3 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv_pool_q(x_ptr, w_ptr, b_ptr, y_ptr, NB, CI, H, W, CO, PH, PW,
                 BLOCK_Q: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_q = tl.program_id(0)
    pid_c = tl.program_id(1)
    PQ = PH * PW
    QTOT = NB * PQ
    KK = CI * 9
    qg = pid_q * BLOCK_Q + tl.arange(0, BLOCK_Q)
    qm = qg < QTOT
    n = qg // PQ
    pq = qg % PQ
    oh = (pq // PW) * 2
    ow = (pq % PW) * 2
    rc = pid_c * BLOCK_CO + tl.arange(0, BLOCK_CO)
    cm = rc < CO
    x_img = x_ptr + n.to(tl.int64)[:, None] * CI * H * W
    acc00 = tl.zeros((BLOCK_Q, BLOCK_CO), dtype=tl.float32)
    acc01 = tl.zeros((BLOCK_Q, BLOCK_CO), dtype=tl.float32)
    acc10 = tl.zeros((BLOCK_Q, BLOCK_CO), dtype=tl.float32)
    acc11 = tl.zeros((BLOCK_Q, BLOCK_CO), dtype=tl.float32)
    for k0 in range(0, KK, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        km = rk < KK
        ci = rk // 9
        t = rk % 9
        b = tl.load(w_ptr + rc[None, :] * KK + rk[:, None], mask=km[:, None] & cm[None, :], other=0.0)
        ih = oh[:, None] + (t // 3)[None, :] - 1
        iw = ow[:, None] + (t % 3)[None, :] - 1
        m = qm[:, None] & km[None, :]
        r0 = (ih >= 0) & (ih < H)
        r1 = (ih + 1 >= 0) & (ih + 1 < H)
        c0 = (iw >= 0) & (iw < W)
        c1 = (iw + 1 >= 0) & (iw + 1 < W)
        src = x_img + ci[None, :] * H * W + ih * W + iw
        acc00 += tl.dot(tl.load(src, mask=m & r0 & c0, other=0.0), b, input_precision="ieee")
        acc01 += tl.dot(tl.load(src + 1, mask=m & r0 & c1, other=0.0), b, input_precision="ieee")
        acc10 += tl.dot(tl.load(src + W, mask=m & r1 & c0, other=0.0), b, input_precision="ieee")
        acc11 += tl.dot(tl.load(src + W + 1, mask=m & r1 & c1, other=0.0), b, input_precision="ieee")
    v = tl.maximum(tl.maximum(acc00, acc01), tl.maximum(acc10, acc11))
    v = tl.maximum(v + tl.load(b_ptr + rc, mask=cm, other=0.0)[None, :], 0.0)
    out_off = (n[:, None].to(tl.int64) * CO + rc[None, :]) * PQ + pq[:, None]
    tl.store(y_ptr + out_off, v, mask=qm[:, None] & cm[None, :])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters in by name.
        self.conv = nn.Conv2d(1, 1, 3, padding=1, bias=True)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        x = x.contiguous()
        nb, ci, h, w = x.shape
        co = self.conv.weight.shape[0]
        ph, pw = h // 2, w // 2
        y = torch.empty((nb, co, ph, pw), device=x.device, dtype=x.dtype)
        bq = 32
        bco = 128
        grid = (triton.cdiv(nb * ph * pw, bq), triton.cdiv(co, bco))
        _conv_pool_q[grid](x, self.conv.weight.contiguous(), self.conv.bias, y, nb, ci, h, w, co, ph, pw,
                           BLOCK_Q=bq, BLOCK_CO=bco, BLOCK_K=32, num_warps=8, num_stages=3)
        return y
