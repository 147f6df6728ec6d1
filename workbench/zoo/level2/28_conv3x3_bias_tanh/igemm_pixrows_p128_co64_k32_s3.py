"""Implicit-GEMM 3x3 convolution laid out the other way round: rows are output pixels across the
whole batch (n, h, w), columns output channels, so one program's tile can span image borders; bias
and tanh (as 2*sigmoid(2x) - 1) fused in the epilogue. IEEE fp32 dots; bp=128, bco=64, bk=32,
4 warps, 3 stages."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv_pix(x_ptr, w_ptr, b_ptr, y_ptr, NB, CI, H, W, CO,
              BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_p = tl.program_id(0)
    pid_c = tl.program_id(1)
    HW = H * W
    P = NB * HW
    KK = CI * 9
    rp = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    rc = pid_c * BLOCK_CO + tl.arange(0, BLOCK_CO)
    n = rp // HW
    hw = rp % HW
    oh = hw // W
    ow = hw % W
    acc = tl.zeros((BLOCK_P, BLOCK_CO), dtype=tl.float32)
    for k0 in range(0, KK, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        ci = rk // 9
        t = rk % 9
        ih = oh[:, None] + (t // 3)[None, :] - 1
        iw = ow[:, None] + (t % 3)[None, :] - 1
        am = (rp[:, None] < P) & (rk[None, :] < KK) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        a = tl.load(x_ptr + ((n[:, None].to(tl.int64) * CI + ci[None, :]) * H + ih) * W + iw, mask=am, other=0.0)
        b = tl.load(w_ptr + rc[None, :] * KK + rk[:, None], mask=(rk[:, None] < KK) & (rc[None, :] < CO), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    cm = rc < CO
    acc += tl.load(b_ptr + rc, mask=cm, other=0.0)[None, :]
    y = 2.0 * tl.sigmoid(2.0 * acc) - 1.0
    out_off = (n[:, None].to(tl.int64) * CO + rc[None, :]) * HW + hw[:, None]
    tl.store(y_ptr + out_off, y, mask=(rp[:, None] < P) & cm[None, :])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder: the executor copies the reference's parameters in by name.
        self.conv = nn.Conv2d(1, 1, 3, padding=1, bias=True)

    def forward(self, x):
        x = x.contiguous()
        nb, ci, h, w = x.shape
        co = self.conv.weight.shape[0]
        y = torch.empty((nb, co, h, w), device=x.device, dtype=x.dtype)
        bp = 128
        bco = 64
        grid = (triton.cdiv(nb * h * w, bp), triton.cdiv(co, bco))
        _conv_pix[grid](x, self.conv.weight.contiguous(), self.conv.bias, y, nb, ci, h, w, co,
                        BLOCK_P=bp, BLOCK_CO=bco, BLOCK_K=32, num_warps=4, num_stages=3)
        return y
