"""PARTIAL candidate: the GEMM x @ W.T (no bias) runs in PyTorch/cuBLAS; one flat elementwise
Triton kernel then adds the bias and clamps to [-1, 1] (block 1024, 4 warps): an extra write and
read of the (M, N) fp32 intermediate."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bias_hardtanh(h_ptr, b_ptr, y_ptr, total, N, BLOCK: tl.constexpr):
    """y = clamp(h + b[col], -1, 1) over a contiguous (M, N) matrix, flattened."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < total
    h = tl.load(h_ptr + offs, mask=ok, other=0.0)
    h += tl.load(b_ptr + offs % N, mask=ok, other=0.0)
    tl.store(y_ptr + offs, tl.minimum(tl.maximum(h, -1.0), 1.0), mask=ok)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder layer: the executor copies the reference's weights in by name.
        self.fc = nn.Linear(1, 1)

    def forward(self, x):
        h = torch.mm(x, self.fc.weight.t()).contiguous()
        y = torch.empty_like(h)
        total = h.numel()
        _bias_hardtanh[(triton.cdiv(total, 1024),)](h, self.fc.bias, y, total, h.shape[1], BLOCK=1024, num_warps=4)
        return y
