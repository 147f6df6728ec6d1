"""Row log-sum-exp unfused into three kernels, the way an eager framework would run it: a row-max
kernel, an elementwise kernel writing e = exp(x - max) to a full-size fp32 temporary, and a
row-sum kernel that adds log(sum e) to the max. Reads x twice and writes and rereads the
temporary: about 4x the traffic of a fused kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_max(x_ptr, m_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row.to(tl.int64) * N
    acc = tl.full((BLOCK,), -float("inf"), tl.float32)
    for c0 in range(0, N, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        acc = tl.maximum(acc, tl.load(base + offs, mask=offs < N, other=-float("inf")))
    tl.store(m_ptr + row, tl.max(acc, axis=0))


@triton.jit
def _exp_shift(x_ptr, m_ptr, e_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    mx = tl.load(m_ptr + rows, mask=rows < M, other=0.0)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(e_ptr + offs, tl.exp(x - mx[:, None]), mask=mask)


@triton.jit
def _row_sum_log(e_ptr, m_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = e_ptr + row.to(tl.int64) * N
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        acc += tl.load(base + offs, mask=offs < N, other=0.0)
    tl.store(y_ptr + row, tl.load(m_ptr + row) + tl.log(tl.sum(acc, axis=0)))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.contiguous().view(-1, x.shape[-1])
        rows, n = x2.shape
        mx = torch.empty((rows,), device=x.device, dtype=torch.float32)
        e = torch.empty((rows, n), device=x.device, dtype=torch.float32)
        y = torch.empty((rows,), device=x.device, dtype=x.dtype)
        _row_max[(rows,)](x2, mx, n, BLOCK=1024, num_warps=4)
        grid = lambda meta: (triton.cdiv(rows, meta["BLOCK_M"]), triton.cdiv(n, meta["BLOCK_N"]))
        _exp_shift[grid](x2, mx, e, rows, n, BLOCK_M=16, BLOCK_N=256, num_warps=4)
        _row_sum_log[(rows,)](e, mx, y, n, BLOCK=1024, num_warps=4)
        return y.view(x.shape[:-1])
