"""Implicit-GEMM 3x3 convolution laid out with conv-output pixels as rows (across the whole batch)
and output channels as columns. The rows are ordered in quads: row r is window position r % 4 of
pooled pixel r // 4, so one (BLOCK_P x BLOCK_CO) accumulator holds BLOCK_P / 4 complete 2x2
windows; the epilogue reshapes it to (BLOCK_P / 4, 4, BLOCK_CO), takes the max over the window
axis, adds the bias and applies ReLU. IEEE fp32 dots; bp=128 conv pixels (32 pooled), bco=64,
bk=32, 4 warps, 3 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv_pool_rows(x_ptr, w_ptr, b_ptr, y_ptr, NB, CI, H, W, CO, PH, PW,
                    BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_p = tl.program_id(0)
    pid_c = tl.program_id(1)
    PQ = PH * PW
    QTOT = NB * PQ
    KK = CI * 9
    r = tl.arange(0, BLOCK_P)
    qg = pid_p * (BLOCK_P // 4) + r // 4
    d = r % 4
    n = qg // PQ
    pq = qg % PQ
    oh = (pq // PW) * 2 + d // 2
    ow = (pq % PW) * 2 + d % 2
    rc = pid_c * BLOCK_CO + tl.arange(0, BLOCK_CO)
    acc = tl.zeros((BLOCK_P, BLOCK_CO), dtype=tl.float32)
    for k0 in range(0, KK, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        ci = rk // 9
        t = rk % 9
        ih = oh[:, None] + (t // 3)[None, :] - 1
        iw = ow[:, None] + (t % 3)[None, :] - 1
        am = (qg[:, None] < QTOT) & (rk[None, :] < KK) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        a = tl.load(x_ptr + ((n[:, None].to(tl.int64) * CI + ci[None, :]) * H + ih) * W + iw, mask=am, other=0.0)
        b = tl.load(w_ptr + rc[None, :] * KK + rk[:, None], mask=(rk[:, None] < KK) & (rc[None, :] < CO), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    v = tl.max(tl.reshape(acc, (BLOCK_P // 4, 4, BLOCK_CO)), axis=1)
    cm = rc < CO
    v = tl.maximum(v + tl.load(b_ptr + rc, mask=cm, other=0.0)[None, :], 0.0)
    qo = pid_p * (BLOCK_P // 4) + tl.arange(0, BLOCK_P // 4)
    no = qo // PQ
    po = qo % PQ
    out_off = (no[:, None].to(tl.int64) * CO + rc[None, :]) * PQ + po[:, None]
    tl.store(y_ptr + out_off, v, mask=(qo[:, None] < QTOT) & cm[None, :])


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
        bp = 128
        bco = 64
        grid = (triton.cdiv(nb * ph * pw * 4, bp), triton.cdiv(co, bco))
        _conv_pool_rows[grid](x, self.conv.weight.contiguous(), self.conv.bias, y, nb, ci, h, w, co, ph, pw,
                              BLOCK_P=bp, BLOCK_CO=bco, BLOCK_K=32, num_warps=4, num_stages=3)
        return y
