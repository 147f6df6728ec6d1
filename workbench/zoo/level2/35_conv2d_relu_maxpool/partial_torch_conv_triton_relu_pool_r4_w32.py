"""PARTIAL candidate: the convolution (with its bias) runs in PyTorch/cuDNN; only ReLU + 2x2 max
pooling is a Triton kernel, on 2-D tiles of 4 pooled rows x 32 pooled columns of one
(image, channel) plane, loading the (8 x 64) input patch as four strided (4 x 32) views;
ROWS_PER_PROGRAM=4, BLOCK_W=32, 2 warps."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _relu_maxpool2x2(x_ptr, y_ptr, H, W, PH, PW, ROWS_PER_PROGRAM: tl.constexpr, BLOCK_W: tl.constexpr):
    plane = tl.program_id(0)
    pr = tl.program_id(1)
    pc = tl.program_id(2)
    rr = pr * ROWS_PER_PROGRAM + tl.arange(0, ROWS_PER_PROGRAM)
    cc = pc * BLOCK_W + tl.arange(0, BLOCK_W)
    m = (rr[:, None] < PH) & (cc[None, :] < PW)
    src = x_ptr + plane.to(tl.int64) * H * W + (rr[:, None] * 2) * W + cc[None, :] * 2
    v = tl.maximum(tl.load(src, mask=m, other=0.0), tl.load(src + 1, mask=m, other=0.0))
    v = tl.maximum(v, tl.maximum(tl.load(src + W, mask=m, other=0.0), tl.load(src + W + 1, mask=m, other=0.0)))
    v = tl.maximum(v, 0.0)
    tl.store(y_ptr + plane.to(tl.int64) * PH * PW + rr[:, None] * PW + cc[None, :], v, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholders: the executor copies the reference's parameters in by name.
        self.conv = nn.Conv2d(1, 1, 3, padding=1, bias=True)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        c = F.conv2d(x, self.conv.weight, self.conv.bias, padding=1).contiguous()
        nb, co, h, w = c.shape
        ph, pw = h // 2, w // 2
        y = torch.empty((nb, co, ph, pw), device=x.device, dtype=x.dtype)
        rows = 4
        bw = 32
        grid = (nb * co, triton.cdiv(ph, rows), triton.cdiv(pw, bw))
        _relu_maxpool2x2[grid](c, y, h, w, ph, pw, ROWS_PER_PROGRAM=rows, BLOCK_W=bw, num_warps=2)
        return y
