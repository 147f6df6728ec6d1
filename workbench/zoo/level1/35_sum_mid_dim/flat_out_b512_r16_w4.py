"""Sum over the middle axis of (B, R, N), with the (B, N) output flattened: each program owns
512 consecutive outputs (which may straddle a batch boundary; batch and column come from a
div/mod of the flat index) and walks all R rows in steps of 16, 4 warps. Works for any N, but
the compiler cannot prove the div/mod-derived addresses contiguous, so the loads are not
vectorised (4-byte accesses instead of 16-byte ones): well below bandwidth."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sum_mid_flat(x_ptr, y_ptr, total, R, N, BLOCK_O: tl.constexpr, BLOCK_R: tl.constexpr):
    o = tl.program_id(0) * BLOCK_O + tl.arange(0, BLOCK_O)
    omask = o < total
    b = o // N
    col = o - b * N
    base = b.to(tl.int64) * R * N + col
    acc = tl.zeros((BLOCK_R, BLOCK_O), tl.float32)
    for r0 in range(0, R, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        mask = (rows[:, None] < R) & omask[None, :]
        acc += tl.load(x_ptr + base[None, :] + rows[:, None].to(tl.int64) * N, mask=mask, other=0.0)
    tl.store(y_ptr + o, tl.sum(acc, axis=0), mask=omask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        bsz, r, n = x.shape
        y = torch.empty((bsz, n), device=x.device, dtype=x.dtype)
        total = bsz * n
        grid = lambda meta: (triton.cdiv(total, meta["BLOCK_O"]),)
        _sum_mid_flat[grid](x, y, total, r, n, BLOCK_O=512, BLOCK_R=16, num_warps=4)
        return y
