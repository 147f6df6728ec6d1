"""Triton templates for the generic kinds (`generic.py`): convolutions, pooling, scans, losses.

Same conventions as `workbench.search.lowering_templates`: fp32 arithmetic, every size read
from the tensors at run time, the op's constant arguments (stride, padding, ...) passed by the
generated forward, literal tile sizes at each launch (sized for the interpreter when Triton
runs in it), the launcher of group `i` named `_lowered_{i}`.

- convolution (1-3 spatial dims, groups, stride, padding, dilation, bias) and transposed
  convolution (also output padding) as an implicit GEMM: M = batch x output positions, N = the
  group's output channels, K = the group's input channels x kernel positions; the A tile is
  gathered from the input with its bounds masked, B is the weight, `tl.dot` accumulates in fp32
  (IEEE for fp32 inputs);
- pooling (max / average, 1-3 dims, padding, dilation, ceil mode, count_include_pad, and the
  adaptive forms): one output element per lane, a loop over the window;
- cumulative sum / product along any dim: the input as (outer, R, inner), R walked in chunks
  with `tl.cumsum` / `tl.cumprod` and a carry;
- losses: an elementwise expression of the inputs summed to one value (mean, sum, batchmean), or
  a per-row value (cross entropy, cosine similarity, pairwise distance, triplet margin) and
  then its mean; two stages, per-program partial sums and one program adding them.
"""
from __future__ import annotations

from workbench.search.lowering_templates import interpreted, tile


def _pad3(name: str, d: int) -> str:
    """`(v0, v1, v2)` of a d-long tuple argument padded with 1 (sizes) to three entries."""
    return f"tuple({name}) + (1,) * (3 - {d})"


# =========================================================================== convolution
_CONV = '''@triton.jit
def _conv_kernel_{i}(x_ptr, w_ptr, b_ptr, out_ptr, C, OC, I0, I1, I2, O0, O1, O2, K0, K1, K2,
                    S0, S1, S2, P0, P1, P2, D0, D1, D2, CG, OCG, M, KTOT,
                    HAS_BIAS: tl.constexpr, TRANSPOSED: tl.constexpr, IEEE: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    g = tl.program_id(2)
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mmask = rm < M
    nmask = rn < OCG
    t = rm.to(tl.int64)
    o2 = t % O2
    t = t // O2
    o1 = t % O1
    t = t // O1
    o0 = t % O0
    n = t // O0
    KS = K0 * K1 * K2
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for kb in range(0, KTOT, BLOCK_K):
        rk = kb + tl.arange(0, BLOCK_K)
        kmask = rk < KTOT
        c = rk // KS
        kf = rk % KS
        k2 = kf % K2
        k1 = (kf // K2) % K1
        k0 = kf // (K2 * K1)
        if TRANSPOSED:
            t0 = o0[:, None] + P0 - k0[None, :] * D0
            t1 = o1[:, None] + P1 - k1[None, :] * D1
            t2 = o2[:, None] + P2 - k2[None, :] * D2
            ok = (t0 >= 0) & (t1 >= 0) & (t2 >= 0) & (t0 % S0 == 0) & (t1 % S1 == 0) & (t2 % S2 == 0)
            i0 = t0 // S0
            i1 = t1 // S1
            i2 = t2 // S2
        else:
            i0 = o0[:, None] * S0 - P0 + k0[None, :] * D0
            i1 = o1[:, None] * S1 - P1 + k1[None, :] * D1
            i2 = o2[:, None] * S2 - P2 + k2[None, :] * D2
            ok = (i0 >= 0) & (i1 >= 0) & (i2 >= 0)
        ok = ok & (i0 < I0) & (i1 < I1) & (i2 < I2) & mmask[:, None] & kmask[None, :]
        ch = g * CG + c
        x_off = ((n[:, None] * C + ch[None, :]) * I0 + i0) * I1 * I2 + i1 * I2 + i2
        a = tl.load(x_ptr + tl.where(ok, x_off, 0), mask=ok, other=0.0)
        if TRANSPOSED:
            w_off = ((g * CG + c[:, None]) * OCG + rn[None, :]) * KS + kf[:, None]
        else:
            w_off = (g * OCG + rn[None, :]) * KTOT + rk[:, None]
        b = tl.load(w_ptr + w_off, mask=kmask[:, None] & nmask[None, :], other=0.0)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
    oc = g * OCG + rn
    if HAS_BIAS:
        acc += tl.load(b_ptr + oc, mask=nmask, other=0.0).to(tl.float32)[None, :]
    osp = O0 * O1 * O2
    pos = (o0 * O1 + o1) * O2 + o2
    out_off = (n[:, None] * OC + oc[None, :]) * osp + pos[:, None]
    tl.store(out_ptr + out_off, acc.to(out_ptr.dtype.element_ty), mask=mmask[:, None] & nmask[None, :])


def _lowered_{i}(x, w, b, stride, padding, dilation, groups, output_padding):
    d = w.dim() - 2
    unbatched = x.dim() == d + 1
    if unbatched:
        x = x.unsqueeze(0)
    x, w = x.contiguous(), w.contiguous()
    N, C = x.shape[0], x.shape[1]
    I, K = list(x.shape[2:]), list(w.shape[2:])
    if {transposed}:
        OCG = w.shape[1]
        O = [(I[k] - 1) * stride[k] - 2 * padding[k] + dilation[k] * (K[k] - 1) + output_padding[k] + 1
             for k in range(d)]
    else:
        OCG = w.shape[0] // groups
        O = [(I[k] + 2 * padding[k] - dilation[k] * (K[k] - 1) - 1) // stride[k] + 1 for k in range(d)]
    OC = OCG * groups
    out = torch.empty((N, OC, *O), dtype=x.dtype, device=x.device)
    M = N
    for o in O:
        M *= o
    CG = C // groups
    KTOT = CG
    for k in K:
        KTOT *= k
    if out.numel() == 0:
        return out.squeeze(0) if unbatched else out
    I3, O3, K3 = {pad_i}, {pad_o}, {pad_k}
    S3, P3, D3 = tuple(stride) + (1,) * (3 - d), tuple(padding) + (0,) * (3 - d), tuple(dilation) + (1,) * (3 - d)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(OCG, meta["BLOCK_N"]), groups)
    _conv_kernel_{i}[grid](x, w, b if b is not None else w, out, C, OC, *I3, *O3, *K3, *S3, *P3, *D3, CG, OCG, M, KTOT,
                          HAS_BIAS=b is not None, TRANSPOSED={transposed}, IEEE=x.dtype == torch.float32,
                          {sizes}, num_warps=4)
    return out.squeeze(0) if unbatched else out
'''


def render_conv(i: int, transposed: bool) -> str:
    """A (transposed) convolution over 1-3 spatial dims; the launcher takes (x, weight, bias,
    stride, padding, dilation, groups, output_padding) with the tuples as long as the dims."""
    if interpreted():
        sizes = ("BLOCK_M=1024, BLOCK_N=min(128, max(16, triton.next_power_of_2(OCG))), "
                 "BLOCK_K=min(128, max(16, triton.next_power_of_2(KTOT)))")
    else:
        sizes = "BLOCK_M=64, BLOCK_N=64, BLOCK_K=32"
    return _CONV.format(i=i, transposed="True" if transposed else "False", sizes=sizes,
                        pad_i=_pad3("I", "d"), pad_o=_pad3("O", "d"), pad_k=_pad3("K", "d"))


# =========================================================================== pooling
_POOL = '''@triton.jit
def _pool_kernel_{i}(x_ptr, out_ptr, TOTAL, I0, I1, I2, O0, O1, O2, K0, K1, K2, S0, S1, S2, P0, P1, P2,
                    D0, D1, D2, DIVISOR, IS_MAX: tl.constexpr, ADAPTIVE: tl.constexpr, COUNT_PAD: tl.constexpr,
                    BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < TOTAL
    t = offs
    o2 = t % O2
    t = t // O2
    o1 = t % O1
    t = t // O1
    o0 = t % O0
    nc = t // O0
    if ADAPTIVE:
        s0 = (o0 * I0) // O0
        s1 = (o1 * I1) // O1
        s2 = (o2 * I2) // O2
        e0 = ((o0 + 1) * I0 + O0 - 1) // O0
        e1 = ((o1 + 1) * I1 + O1 - 1) // O1
        e2 = ((o2 + 1) * I2 + O2 - 1) // O2
    else:
        s0 = o0 * S0 - P0
        s1 = o1 * S1 - P1
        s2 = o2 * S2 - P2
        e0 = s0 + (K0 - 1) * D0 + 1
        e1 = s1 + (K1 - 1) * D1 + 1
        e2 = s2 + (K2 - 1) * D2 + 1
    if IS_MAX:
        acc = tl.full([BLOCK], -float("inf"), tl.float32)
    else:
        acc = tl.zeros([BLOCK], tl.float32)
    for kk in range(0, K0 * K1 * K2):
        k2 = kk % K2
        k1 = (kk // K2) % K1
        k0 = kk // (K2 * K1)
        if ADAPTIVE:
            i0 = s0 + k0
            i1 = s1 + k1
            i2 = s2 + k2
        else:
            i0 = s0 + k0 * D0
            i1 = s1 + k1 * D1
            i2 = s2 + k2 * D2
        ok = mask & (i0 >= 0) & (i0 < I0) & (i1 >= 0) & (i1 < I1) & (i2 >= 0) & (i2 < I2)
        ok = ok & (i0 < e0) & (i1 < e1) & (i2 < e2)
        off = ((nc * I0 + i0) * I1 + i1) * I2 + i2
        if IS_MAX:
            v = tl.load(x_ptr + tl.where(ok, off, 0), mask=ok, other=-float("inf")).to(tl.float32)
            acc = tl.maximum(acc, v)
        else:
            v = tl.load(x_ptr + tl.where(ok, off, 0), mask=ok, other=0.0).to(tl.float32)
            acc += v
    if not IS_MAX:
        if DIVISOR > 0:
            acc = acc / DIVISOR
        elif ADAPTIVE:
            acc = acc / ((e0 - s0) * (e1 - s1) * (e2 - s2)).to(tl.float32)
        elif COUNT_PAD:
            n0 = tl.minimum(s0 + (K0 - 1) * D0 + 1, I0 + P0) - s0
            n1 = tl.minimum(s1 + (K1 - 1) * D1 + 1, I1 + P1) - s1
            n2 = tl.minimum(s2 + (K2 - 1) * D2 + 1, I2 + P2) - s2
            acc = acc / (n0 * n1 * n2).to(tl.float32)
        else:
            n0 = tl.minimum(e0, I0) - tl.maximum(s0, 0)
            n1 = tl.minimum(e1, I1) - tl.maximum(s1, 0)
            n2 = tl.minimum(e2, I2) - tl.maximum(s2, 0)
            acc = acc / (n0 * n1 * n2).to(tl.float32)
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)


def _lowered_{i}(x, d, kernel, stride, padding, dilation, ceil_mode, is_max, count_pad, divisor, adaptive):
    unbatched = x.dim() == d + 1
    if unbatched:
        x = x.unsqueeze(0)
    x = x.contiguous()
    I = list(x.shape[2:])
    if adaptive:
        O = [I[k] if kernel[k] is None else kernel[k] for k in range(d)]
        K = [-(-I[k] // O[k]) + 1 for k in range(d)]
        stride, padding, dilation = [1] * d, [0] * d, [1] * d
    else:
        K = list(kernel)
        O = []
        for k in range(d):
            span = I[k] + 2 * padding[k] - dilation[k] * (K[k] - 1) - 1
            o = (-(-span // stride[k]) if ceil_mode else span // stride[k]) + 1
            if ceil_mode and (o - 1) * stride[k] >= I[k] + padding[k]:
                o -= 1
            O.append(o)
    out = torch.empty((*x.shape[:2], *O), dtype=x.dtype, device=x.device)
    total = out.numel()
    if total:
        I3, O3, K3 = {pad_i}, {pad_o}, {pad_k}
        S3 = tuple(stride) + (1,) * (3 - d)
        P3 = tuple(padding) + (0,) * (3 - d)
        D3 = tuple(dilation) + (1,) * (3 - d)
        grid = lambda meta: (triton.cdiv(total, meta["BLOCK"]),)
        _pool_kernel_{i}[grid](x, out, total, *I3, *O3, *K3, *S3, *P3, *D3, divisor or 0, IS_MAX=is_max,
                              ADAPTIVE=adaptive, COUNT_PAD=count_pad, BLOCK={block}, num_warps=4)
    return out.squeeze(0) if unbatched else out
'''


def render_pool(i: int) -> str:
    """Max / average pooling (and the adaptive forms) over 1-3 spatial dims; the launcher takes
    (x, dims, kernel, stride, padding, dilation, ceil_mode, is_max, count_include_pad,
    divisor_override, adaptive); adaptive: `kernel` is the output size."""
    return _POOL.format(i=i, block=16384 if interpreted() else 256, pad_i=_pad3("I", "d"),
                        pad_o=_pad3("O", "d"), pad_k=_pad3("K", "d"))


# =========================================================================== scans
_SCAN = '''@triton.jit
def _scan_mul_{i}(a, b):
    return a * b


@triton.jit
def _scan_kernel_{i}(x_ptr, out_ptr, R, INNER, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr, PROD: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    cmask = cols < INNER
    base = o * R * INNER
    if PROD:
        carry = tl.full([BLOCK_I], 1.0, tl.float32)
    else:
        carry = tl.zeros([BLOCK_I], tl.float32)
    for r0 in range(0, R, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        m = (rows[:, None] < R) & cmask[None, :]
        offs = base + rows[:, None] * INNER + cols[None, :]
        if PROD:
            v = tl.load(x_ptr + offs, mask=m, other=1.0).to(tl.float32)
            c = tl.cumprod(v, axis=0) * carry[None, :]
            carry = carry * tl.reduce(v, 0, _scan_mul_{i})
        else:
            v = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
            c = tl.cumsum(v, axis=0) + carry[None, :]
            carry = carry + tl.sum(v, axis=0)
        tl.store(out_ptr + offs, c.to(out_ptr.dtype.element_ty), mask=m)


def _lowered_{i}(x, dim, prod):
    shape = x.shape
    if x.dim() == 0:
        return x.clone()
    dim = dim % x.dim()
    outer = inner = 1
    for s in shape[:dim]:
        outer *= s
    for s in shape[dim + 1:]:
        inner *= s
    R = shape[dim]
    x = x.contiguous()
    out = torch.empty_like(x)
    if out.numel():
        grid = lambda meta: (outer, triton.cdiv(inner, meta["BLOCK_I"]))
        _scan_kernel_{i}[grid](x, out, R, inner, {sizes}, PROD=prod, num_warps=4)
    return out
'''


def render_scan(i: int) -> str:
    """Cumulative sum (or product) along `dim`; the launcher takes (x, dim, prod)."""
    if interpreted():
        sizes = "BLOCK_R=min(1024, triton.next_power_of_2(R)), BLOCK_I=min(256, triton.next_power_of_2(inner))"
    else:
        sizes = "BLOCK_R=64, BLOCK_I=16"
    return _SCAN.format(i=i, sizes=sizes)


# =========================================================================== losses
_SUM_STAGES = '''@triton.jit
def _partial_sum_{i}({ptrs}, part_ptr, n, {extra}BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
{loads}
{body}
    tl.store(part_ptr + tl.program_id(0), tl.sum(tl.where(mask, v, 0.0), axis=0))


@triton.jit
def _total_{i}(part_ptr, out_ptr, n_parts, scale, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for s in range(0, n_parts, BLOCK):
        k = s + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + k, mask=k < n_parts, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) * scale)


def _sum_{i}(tensors, denom, dtype{extra_args}):
    """sum over all elements of the expression of `tensors` (same shape), divided by `denom`."""
    n = tensors[0].numel()
    tensors = [t.contiguous() for t in tensors]
    out = torch.empty((), dtype=dtype, device=tensors[0].device)
    block = {block}
    parts = torch.empty(max(1, triton.cdiv(n, block)), dtype=torch.float32, device=out.device)
    if n == 0:
        parts.zero_()
    else:
        _partial_sum_{i}[(triton.cdiv(n, block),)](*tensors, parts, n, {extra_call}BLOCK=block, num_warps=4)
    _total_{i}[(1,)](parts, out, parts.numel(), 1.0 / denom, BLOCK=1024, num_warps=4)
    return out
'''


def sum_stages(i: int, n_inputs: int, body: list[str], extra: tuple[str, ...] = ()) -> str:
    """`_sum_{i}(tensors, denom, dtype, *extra)`: sum of `v` (the last body line's value, fp32,
    from loads x0.. of the inputs) over all elements, divided by `denom`, as a 0-d tensor."""
    ptrs = ", ".join(f"x{j}_ptr" for j in range(n_inputs))
    loads = "\n".join(f"    x{j} = tl.load(x{j}_ptr + offs, mask=mask, other=0).to(tl.float32)"
                      for j in range(n_inputs))
    return _SUM_STAGES.format(i=i, ptrs=ptrs, loads=loads, body="\n".join("    " + b for b in body),
                              extra="".join(f"{e}, " for e in extra),
                              extra_args="".join(f", {e}" for e in extra),
                              extra_call="".join(f"{e}, " for e in extra),
                              block=65536 if interpreted() else 1024)


_ROWS = '''@triton.jit
def _rows_kernel_{i}(a_ptr, b_ptr, c_ptr, t_ptr, out_ptr, valid_ptr, n_rows, R, p1, p2, ROWS: tl.constexpr,
                    BLOCK_R: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = rows < n_rows
    base = rows.to(tl.int64)[:, None] * R
{body}


def _rows_{i}(a, b, c, t, p1, p2):
    """One value per row of the (rows, R) views of a, b, c (per-row targets t), and a 0/1 weight."""
    n_rows = a.shape[0]
    R = a.shape[1]
    out = torch.empty(n_rows, dtype=torch.float32, device=a.device)
    valid = torch.empty(n_rows, dtype=torch.float32, device=a.device)
    if n_rows:
        grid = lambda meta: (triton.cdiv(n_rows, meta["ROWS"]),)
        _rows_kernel_{i}[grid](a, b if b is not None else a, c if c is not None else a, t if t is not None else a,
                              out, valid, n_rows, R, p1, p2, {sizes}, num_warps=4)
    return out, valid
'''

_LOOP = ["for r0 in range(0, R, BLOCK_R):",
         "    r = r0 + tl.arange(0, BLOCK_R)",
         "    m = rmask[:, None] & (r[None, :] < R)",
         "    offs = base + r[None, :]"]

ROW_BODIES = {
    # cross entropy of logits a (rows, classes) against integer targets t; ignore_index p1
    "ce": _LOOP + ['    v = tl.load(a_ptr + offs, mask=m, other=-float("inf")).to(tl.float32)',
                   '    mx = tl.maximum(mx, v)'] + [
        "top = tl.max(mx, axis=1)",
        "acc = tl.zeros([ROWS, BLOCK_R], tl.float32)"] + _LOOP + [
        '    v = tl.load(a_ptr + offs, mask=m, other=-float("inf")).to(tl.float32)',
        "    acc += tl.where(m, tl.exp(v - top[:, None]), 0.0)"] + [
        "lse = tl.log(tl.sum(acc, axis=1)) + top",
        "tgt = tl.load(t_ptr + rows, mask=rmask, other=0).to(tl.int64)",
        "ok = rmask & (tgt != p1)",
        "pick = tl.load(a_ptr + rows.to(tl.int64) * R + tl.where(ok, tgt, 0), mask=ok, other=0.0).to(tl.float32)",
        "tl.store(out_ptr + rows, tl.where(ok, lse - pick, 0.0), mask=rmask)",
        "tl.store(valid_ptr + rows, tl.where(ok, 1.0, 0.0), mask=rmask)"],
    # cosine similarity of a and b along the row; eps p1
    "cos": ["dot = tl.zeros([ROWS, BLOCK_R], tl.float32)", "na = tl.zeros([ROWS, BLOCK_R], tl.float32)",
            "nb = tl.zeros([ROWS, BLOCK_R], tl.float32)"] + _LOOP + [
        "    x = tl.load(a_ptr + offs, mask=m, other=0.0).to(tl.float32)",
        "    y = tl.load(b_ptr + offs, mask=m, other=0.0).to(tl.float32)",
        "    dot += x * y", "    na += x * x", "    nb += y * y"] + [
        "w = tl.sum(na, axis=1) * tl.sum(nb, axis=1)",
        "res = tl.sum(dot, axis=1) / tl.sqrt(tl.maximum(w, p1 * p1))",
        "tl.store(out_ptr + rows, res, mask=rmask)", "tl.store(valid_ptr + rows, 1.0, mask=rmask)"],
    # p-norm (p1) of a - b + eps (p2) along the row
    "pdist": ["acc = tl.zeros([ROWS, BLOCK_R], tl.float32)"] + _LOOP + [
        "    d = tl.load(a_ptr + offs, mask=m, other=0.0).to(tl.float32) - "
        "tl.load(b_ptr + offs, mask=m, other=0.0).to(tl.float32) + p2",
        "    acc += tl.where(m, tl.exp(p1 * tl.log(tl.abs(d))), 0.0)"] + [
        "res = tl.exp(tl.log(tl.sum(acc, axis=1)) / p1)",
        "tl.store(out_ptr + rows, res, mask=rmask)", "tl.store(valid_ptr + rows, 1.0, mask=rmask)"],
    # triplet margin: max(d(a, b) - d(a, c) + margin (p1), 0) with 2-norms and eps p2
    "triplet": ["sp = tl.zeros([ROWS, BLOCK_R], tl.float32)", "sn = tl.zeros([ROWS, BLOCK_R], tl.float32)"] + _LOOP + [
        "    x = tl.load(a_ptr + offs, mask=m, other=0.0).to(tl.float32)",
        "    dp = x - tl.load(b_ptr + offs, mask=m, other=0.0).to(tl.float32) + p2",
        "    dn = x - tl.load(c_ptr + offs, mask=m, other=0.0).to(tl.float32) + p2",
        "    sp += tl.where(m, dp * dp, 0.0)", "    sn += tl.where(m, dn * dn, 0.0)"] + [
        "res = tl.maximum(tl.sqrt(tl.sum(sp, axis=1)) - tl.sqrt(tl.sum(sn, axis=1)) + p1, 0.0)",
        "tl.store(out_ptr + rows, res, mask=rmask)", "tl.store(valid_ptr + rows, 1.0, mask=rmask)"],
}


def render_rows(i: int, kind: str) -> str:
    """`_rows_{i}(a, b, c, t, p1, p2) -> (values, weights)`: one fp32 value per row (see ROW_BODIES)."""
    body = ROW_BODIES[kind]
    if kind == "ce":
        body = [f"mx = tl.full([ROWS, BLOCK_R], -float(\"inf\"), tl.float32)"] + body
    if interpreted():
        sizes = ("BLOCK_R=min(4096, triton.next_power_of_2(R)), "
                 "ROWS=max(1, min(256, 32768 // min(4096, triton.next_power_of_2(R))))")
    else:
        sizes = "ROWS=4, BLOCK_R=256"
    return _ROWS.format(i=i, body="\n".join("    " + b for b in body), sizes=sizes)
