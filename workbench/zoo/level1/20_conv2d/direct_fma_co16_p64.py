"""Direct 3x3 convolution with CUDA-core FMAs (no tl.dot): each program owns 16 output
channels x 64 output pixels of one image and accumulates outer products of a weight column and
a shifted input row over C_in and the 9 taps. Exact fp32, no tensor cores."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv3x3_direct(x_ptr, w_ptr, y_ptr, C_IN, C_OUT, H, W,
                    BLOCK_CO: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    pco = tl.program_id(1)
    pp = tl.program_id(2)
    co = pco * BLOCK_CO + tl.arange(0, BLOCK_CO)
    p = pp * BLOCK_P + tl.arange(0, BLOCK_P)
    oh = p // W
    ow = p % W
    pmask = p < H * W
    comask = co < C_OUT
    acc = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    x_img = x_ptr + n.to(tl.int64) * C_IN * H * W
    for ci in range(0, C_IN):
        x_plane = x_img + ci * H * W
        for t in tl.static_range(9):
            ih = oh + (t // 3) - 1
            iw = ow + (t % 3) - 1
            ok = pmask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            xv = tl.load(x_plane + ih * W + iw, mask=ok, other=0.0)
            wv = tl.load(w_ptr + co * (C_IN * 9) + ci * 9 + t, mask=comask, other=0.0)
            acc += wv[:, None] * xv[None, :]
    y_img = y_ptr + n.to(tl.int64) * C_OUT * H * W
    tl.store(y_img + co[:, None] * (H * W) + p[None, :], acc,
             mask=comask[:, None] & pmask[None, :])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder shape: the executor copies the reference's conv weight in by name.
        self.conv = nn.Conv2d(1, 1, 3, padding=1, bias=False)

    def forward(self, x):
        x = x.contiguous()
        w = self.conv.weight.contiguous()
        n, c_in, h, wd = x.shape
        c_out = w.shape[0]
        y = torch.empty((n, c_out, h, wd), device=x.device, dtype=x.dtype)
        grid = (n, triton.cdiv(c_out, 16), triton.cdiv(h * wd, 64))
        _conv3x3_direct[grid](x, w, y, c_in, c_out, h, wd, BLOCK_CO=16, BLOCK_P=64, num_warps=4)
        return y
