"""PARTIAL candidate: the fp16 GEMM x @ W.T runs in PyTorch/cuBLAS; one flat elementwise Triton
kernel then computes h * 0.5 + x in fp32 and rounds to fp16 (block 2048, 8 warps): an extra
write and read of the (M, N) fp16 intermediate."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _scale_residual(h_ptr, x_ptr, y_ptr, total, alpha, BLOCK: tl.constexpr):
    """y = h * alpha + x over contiguous tensors of equal shape, flattened."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < total
    h = tl.load(h_ptr + offs, mask=ok, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + offs, mask=ok, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (h * alpha + x).to(y_ptr.dtype.element_ty), mask=ok)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Placeholder layer: the executor copies the reference's weights in by name.
        self.fc = nn.Linear(1, 1, bias=False)

    def forward(self, x):
        x = x.contiguous()
        h = torch.mm(x, self.fc.weight.t()).contiguous()
        y = torch.empty_like(h)
        total = h.numel()
        _scale_residual[(triton.cdiv(total, 2048),)](h, x, y, total, 0.5, BLOCK=2048, num_warps=8)
        return y
