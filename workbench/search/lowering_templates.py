"""Triton templates that `lowering` renders: a `@triton.jit` kernel and its launcher per group.

Every kernel computes in fp32 and stores in the output's dtype; launchers make their inputs
contiguous, so any layout the reference passes is accepted. The launcher of group `i` is named
`_lowered_{i}` (the generated `forward` calls it). Block sizes are literal integers at launch
where the work does not depend on the row length, so the search's mutation operators can tune
them.
"""
from __future__ import annotations

from typing import Any

_EW = '''@triton.jit
def _ew_kernel_{i}({ptrs}, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
{loads}
{body}
    tl.store(out_ptr + offs, v{last}.to(out_ptr.dtype.element_ty), mask=mask)


def _lowered_{i}({args}):
{contig}
    out = torch.empty_like(x0)
    n = out.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    _ew_kernel_{i}[grid]({args}, out, n, BLOCK=1024, num_warps=4)
    return out
'''

_REDUCE = '''@triton.jit
def _reduce_kernel_{i}(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.full([BLOCK], {init}, tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other={init}).to(tl.float32)
        acc = {combine}
    r = {final}
    tl.store(out_ptr + row, r.to(out_ptr.dtype.element_ty))


def _lowered_{i}(x):
    n_cols = x.shape[-1]
    x2 = x.contiguous().view(-1, n_cols)
    out = torch.empty(x2.shape[0], dtype=x.dtype, device=x.device)
    _reduce_kernel_{i}[(x2.shape[0],)](x2, out, n_cols, BLOCK=min(1024, triton.next_power_of_2(n_cols)),
                                      num_warps=4)
    return out.view({out_shape})
'''

_SOFTMAX = '''@triton.jit
def _softmax_kernel_{i}(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)
    s = tl.sum(e, axis=0)
    y = {result}
    tl.store(out_ptr + row * n_cols + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def _lowered_{i}(x):
    n_cols = x.shape[-1]
    x2 = x.contiguous().view(-1, n_cols)
    out = torch.empty_like(x2)
    _softmax_kernel_{i}[(x2.shape[0],)](x2, out, n_cols, BLOCK=triton.next_power_of_2(n_cols), num_warps=4)
    return out.view(x.shape)
'''

_NORM = '''@triton.jit
def _norm_kernel_{i}(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr,
                    HAS_W: tl.constexpr, HAS_B: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + base + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = cols < n_cols
        d = tl.where(m, tl.load(x_ptr + base + cols, mask=m, other=0.0).to(tl.float32) - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = cols < n_cols
        y = (tl.load(x_ptr + base + cols, mask=m, other=0.0).to(tl.float32) - mean) * rstd
        if HAS_W:
            y = y * tl.load(w_ptr + cols, mask=m, other=1.0).to(tl.float32)
        if HAS_B:
            y = y + tl.load(b_ptr + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(out_ptr + base + cols, y.to(out_ptr.dtype.element_ty), mask=m)


def _lowered_{i}(x, w, b):
    n_cols = x.shape[-1]
    x2 = x.contiguous().view(-1, n_cols)
    out = torch.empty_like(x2)
    _norm_kernel_{i}[(x2.shape[0],)](x2, w if w is not None else x2, b if b is not None else x2, out,
                                    n_cols, {eps}, BLOCK=min(1024, triton.next_power_of_2(n_cols)),
                                    HAS_W=w is not None, HAS_B=b is not None, num_warps=4)
    return out.view(x.shape)
'''

_MM = '''@triton.jit
def _mm_kernel_{i}(a_ptr, b_ptr, bias_ptr, {eptrs}out_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  HAS_BIAS: tl.constexpr, IEEE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
    if HAS_BIAS:
        acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None].to(tl.int64) * N + rn[None, :]
    v0 = acc
{loads}
{body}
    tl.store(out_ptr + offs, v{last}.to(out_ptr.dtype.element_ty), mask=mask)


def _lowered_{i}(a, b, bias{eargs}):
    K = a.shape[-1]
    a2 = a.reshape(-1, K)
    M = a2.shape[0]
    N = b.shape[{n_dim}]
    out = torch.empty((M, N), dtype=a.dtype, device=a.device)
{contig}
    sbk, sbn = {b_strides}
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    _mm_kernel_{i}[grid](a2, b, bias if bias is not None else a2, {ecall}out, M, N, K, a2.stride(0), a2.stride(1),
                        sbk, sbn, HAS_BIAS=bias is not None, IEEE=a.dtype == torch.float32,
                        BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4)
    return out.view(*a.shape[:-1], N)
'''

_REDUCE_OPS = {
    "sum": ("0.0", "acc + v", "tl.sum(acc, axis=0)"),
    "mean": ("0.0", "acc + v", "tl.sum(acc, axis=0) / n_cols"),
    "amax": ('-float("inf")', "tl.maximum(acc, v)", "tl.max(acc, axis=0)"),
    "amin": ('float("inf")', "tl.minimum(acc, v)", "tl.min(acc, axis=0)"),
}


def render(kind: str, i: int, group: Any) -> str:
    """Kernel and launcher source of one lowered group (`lowering._Group`)."""
    if kind == "ew":
        k = len(group.inputs)
        args = ", ".join(f"x{j}" for j in range(k))
        return _EW.format(
            i=i, ptrs=", ".join(f"x{j}_ptr" for j in range(k)), args=args, last=len(group.body) - 1,
            loads="\n".join(f"    x{j} = tl.load(x{j}_ptr + offs, mask=mask, other=0.0).to(tl.float32)"
                            for j in range(k)),
            body="\n".join("    " + ln for ln in group.body),
            contig="\n".join(f"    x{j} = x{j}.contiguous()" for j in range(k)))
    if kind == "mm":
        k = len(group.inputs)
        linear = group.extra["linear"]
        return _MM.format(
            i=i, eptrs="".join(f"x{j}_ptr, " for j in range(k)), eargs="".join(f", x{j}" for j in range(k)),
            ecall="".join(f"x{j}, " for j in range(k)), last=len(group.body),
            loads="\n".join(f"    x{j} = tl.load(x{j}_ptr + offs, mask=mask, other=0.0).to(tl.float32)"
                            for j in range(k)),
            body="\n".join("    " + ln for ln in group.body),
            contig="\n".join(f"    x{j} = x{j}.contiguous()" for j in range(k)) or "",
            n_dim=0 if linear else 1,
            b_strides="b.stride(1), b.stride(0)" if linear else "b.stride(0), b.stride(1)")
    if kind == "reduce":
        init, combine, final = _REDUCE_OPS[group.extra["op"]]
        shape = "*x.shape[:-1], 1" if group.extra["keepdim"] else "x.shape[:-1]"
        return _REDUCE.format(i=i, init=init, combine=combine, final=final, out_shape=shape)
    if kind == "softmax":
        return _SOFTMAX.format(i=i, result="z - tl.log(s)" if group.extra["log"] else "e / s")
    if kind == "norm":
        return _NORM.format(i=i, eps=repr(group.extra["eps"]))
    raise ValueError(f"unknown group kind {kind!r}")
