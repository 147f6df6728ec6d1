"""Part of the Triton library of generic seeds (see `tlib.py`): convolutions, pooling, norms,
sums and per-row losses, recurrent layers. A `string.Template` (`$name` tile sizes).
"""

#: The body of the row-norm kernel (layer, RMS, group and instance norm over rows of `n_cols`;
#: the affine by channel), shared with the lowering's norm template (search/lowering_templates.py).
#: Neither `{` nor `$` appears in it: both templates take it as it is.
NORM_BODY = r'''    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = rows < n_rows
    base = rows.to(tl.int64)[:, None] * n_cols
    ch0 = ((rows % ROW_GROUPS) * CH_PER_ROW)[:, None]
    acc = tl.zeros([ROWS, BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = rmask[:, None] & (cols[None, :] < n_cols)
        acc += tl.load(x_ptr + base + cols[None, :], mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=1) / n_cols
    if RMS:
        mean = mean * 0.0
    acc = tl.zeros([ROWS, BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = rmask[:, None] & (cols[None, :] < n_cols)
        v = tl.load(x_ptr + base + cols[None, :], mask=m, other=0.0).to(tl.float32) - mean[:, None]
        acc += tl.where(m, v * v, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=1) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = rmask[:, None] & (cols[None, :] < n_cols)
        y = (tl.load(x_ptr + base + cols[None, :], mask=m, other=0.0).to(tl.float32) - mean[:, None]) * rstd[:, None]
        ch = ch0 + cols[None, :] // SPATIAL
        if HAS_W:
            y = y * tl.load(w_ptr + ch, mask=m, other=1.0).to(tl.float32)
        if HAS_B:
            y = y + tl.load(b_ptr + ch, mask=m, other=0.0).to(tl.float32)
        tl.store(out_ptr + base + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=m)
'''

NN = r'''# --------------------------------------------------------------------------- convolution
@triton.jit
def _tl_conv(x_ptr, w_ptr, b_ptr, out_ptr, C, OC, I0, I1, I2, O0, O1, O2, K0, K1, K2, S0, S1, S2, P0, P1, P2,
             D0, D1, D2, CG, OCG, M, KTOT, HAS_BIAS: tl.constexpr, TRANSPOSED: tl.constexpr, IEEE: tl.constexpr,
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
    pos = (o0 * O1 + o1) * O2 + o2
    out_off = (n[:, None] * OC + oc[None, :]) * (O0 * O1 * O2) + pos[:, None]
    tl.store(out_ptr + out_off, acc.to(out_ptr.dtype.element_ty), mask=mmask[:, None] & nmask[None, :])


def _tuple(v, d):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * d


def _t_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1, transposed=False, output_padding=0):
    """Convolution (transposed with `transposed`) over 1-3 spatial dims, zero padding."""
    if not (_is_t(x) and _is_t(w)) or not x.is_floating_point() or w.dim() < 3 or w.dim() > 5:
        raise _Unsupported("convolution of these operands")
    d = w.dim() - 2
    unbatched = x.dim() == d + 1
    if unbatched:
        x = x.unsqueeze(0)
    stride, dilation = _tuple(stride, d), _tuple(dilation, d)
    K = list(w.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * d
        elif padding == "same" and all((dilation[k] * (K[k] - 1)) % 2 == 0 for k in range(d)):
            padding = tuple(dilation[k] * (K[k] - 1) // 2 for k in range(d))
        else:
            raise _Unsupported(f"padding {padding!r}")
    padding, output_padding = _tuple(padding, d), _tuple(output_padding, d)
    x, w = x.contiguous(), w.contiguous()
    N, C = x.shape[0], x.shape[1]
    I = list(x.shape[2:])
    if transposed:
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
    if out.numel():
        pad = (1,) * (3 - d)
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(OCG, meta["BLOCK_N"]), groups)
        _tl_conv[grid](x, w, b if b is not None else w, out, C, OC, *(tuple(I) + pad), *(tuple(O) + pad),
                       *(tuple(K) + pad), *(tuple(stride) + pad), *(tuple(padding) + (0,) * (3 - d)),
                       *(tuple(dilation) + pad), CG, OCG, M, KTOT, HAS_BIAS=b is not None, TRANSPOSED=transposed,
                       IEEE=x.dtype == torch.float32, BLOCK_M=$CONV_BM, BLOCK_N=$CONV_BN, BLOCK_K=$CONV_BK,
                       num_warps=4)
    return out.squeeze(0) if unbatched else out


# --------------------------------------------------------------------------- pooling
@triton.jit
def _tl_pool(x_ptr, out_ptr, TOTAL, I0, I1, I2, O0, O1, O2, K0, K1, K2, S0, S1, S2, P0, P1, P2,
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
            acc = tl.maximum(acc, tl.load(x_ptr + tl.where(ok, off, 0), mask=ok, other=-float("inf")).to(tl.float32))
        else:
            acc += tl.load(x_ptr + tl.where(ok, off, 0), mask=ok, other=0.0).to(tl.float32)
    if not IS_MAX:
        if DIVISOR > 0:
            acc = acc / DIVISOR
        elif ADAPTIVE:
            acc = acc / ((e0 - s0) * (e1 - s1) * (e2 - s2)).to(tl.float32)
        elif COUNT_PAD:
            n0 = tl.minimum(s0 + K0, I0 + P0) - s0
            n1 = tl.minimum(s1 + K1, I1 + P1) - s1
            n2 = tl.minimum(s2 + K2, I2 + P2) - s2
            acc = acc / (n0 * n1 * n2).to(tl.float32)
        else:
            n0 = tl.minimum(e0, I0) - tl.maximum(s0, 0)
            n1 = tl.minimum(e1, I1) - tl.maximum(s1, 0)
            n2 = tl.minimum(e2, I2) - tl.maximum(s2, 0)
            acc = acc / (n0 * n1 * n2).to(tl.float32)
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)


def _t_pool(x, d, kernel, stride=None, padding=0, dilation=1, ceil_mode=False, is_max=True, count_pad=True,
            divisor=None, adaptive=False):
    """Max / average pooling over `d` spatial dims; adaptive: `kernel` is the output size."""
    if not _is_t(x) or not x.is_floating_point() or x.dim() not in (d + 1, d + 2):
        raise _Unsupported("pooling of this input")
    if adaptive and all(s == 1 for s in _tuple(kernel, d)):
        # Global pooling (every output size 1) is a reduction over the spatial dims: a window
        # loop of one program per output would run the whole spatial extent serially.
        return _t_reduce("amax" if is_max else "mean", x, list(range(x.dim() - d, x.dim())), keepdim=True)
    unbatched = x.dim() == d + 1
    if unbatched:
        x = x.unsqueeze(0)
    x = x.contiguous()
    I = list(x.shape[2:])
    if adaptive:
        size = _tuple(kernel, d)
        O = [I[k] if size[k] is None else size[k] for k in range(d)]
        K = [-(-I[k] // O[k]) + 1 for k in range(d)]
        S, P, D = [1] * d, [0] * d, [1] * d
    else:
        K = list(_tuple(kernel, d))
        S = list(_tuple(stride if stride not in (None, [], ()) else kernel, d))
        P, D = list(_tuple(padding, d)), list(_tuple(dilation, d))
        O = []
        for k in range(d):
            span = I[k] + 2 * P[k] - D[k] * (K[k] - 1) - 1
            o = (-(-span // S[k]) if ceil_mode else span // S[k]) + 1
            if ceil_mode and (o - 1) * S[k] >= I[k] + P[k]:
                o -= 1
            O.append(o)
    out = torch.empty((*x.shape[:2], *O), dtype=x.dtype, device=x.device)
    total = out.numel()
    if total:
        pad = (1,) * (3 - d)
        grid = lambda meta: (triton.cdiv(total, meta["BLOCK"]),)
        _tl_pool[grid](x, out, total, *(tuple(I) + pad), *(tuple(O) + pad), *(tuple(K) + pad), *(tuple(S) + pad),
                       *(tuple(P) + (0,) * (3 - d)), *(tuple(D) + pad), divisor or 0, IS_MAX=is_max,
                       ADAPTIVE=adaptive, COUNT_PAD=count_pad, BLOCK=$POOL, num_warps=4)
    return out.squeeze(0) if unbatched else out


# --------------------------------------------------------------------------- norms
@triton.jit
def _tl_norm(x_ptr, w_ptr, b_ptr, out_ptr, n_rows, n_cols, eps, ROW_GROUPS, CH_PER_ROW, SPATIAL,
             HAS_W: tl.constexpr, HAS_B: tl.constexpr, RMS: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
''' + NORM_BODY + r'''

def _t_norm(kind, x, w=None, b=None, eps=1e-5, ndims=1, groups=1):
    """layer / rms norm over the trailing `ndims` dims, group norm in `groups` groups, instance norm."""
    if not _is_t(x) or not x.is_floating_point():
        raise _Unsupported(f"{kind} norm of this input")
    shape = x.shape
    if kind in ("layer", "rms"):
        n_cols = 1
        for s in shape[len(shape) - ndims:]:
            n_cols *= s
        row_groups, ch_per_row, spatial = 1, 0, 1
    else:
        if x.dim() < 2:
            raise _Unsupported(f"{kind} norm of a {x.dim()}-D input")
        C = shape[1]
        spatial = 1
        for s in shape[2:]:
            spatial *= s
        if kind == "group":
            n_cols, row_groups, ch_per_row = C // groups * spatial, groups, C // groups
        else:
            n_cols, row_groups, ch_per_row = spatial, C, 1
    x2 = x.contiguous().view(-1, n_cols) if n_cols else x.contiguous().view(-1, 1)
    out = torch.empty_like(x2)
    n_rows = x2.shape[0]
    if out.numel() and n_cols:
        w = w.reshape(-1) if w is not None else None
        b = b.reshape(-1) if b is not None else None
        grid = lambda meta: (triton.cdiv(n_rows, meta["ROWS"]),)
        _tl_norm[grid](x2, w if w is not None else x2, b if b is not None else x2, out, n_rows, n_cols, float(eps),
                       row_groups, ch_per_row, spatial, HAS_W=w is not None, HAS_B=b is not None, RMS=kind == "rms",
                       ROWS=$NROWS, BLOCK=$NBLOCK, num_warps=4)
    return out.view(shape)


def _t_batchnorm(x, mean, var, w=None, b=None, eps=1e-5):
    """Batch norm with given statistics (eval mode): a per-channel affine over dim 1."""
    if not _is_t(x) or x.dim() < 2:
        raise _Unsupported("batch norm of this input")
    view = (1, -1) + (1,) * (x.dim() - 2)
    scale = _t_unary("rsqrt", _t_binary("add", var, float(eps)))
    if w is not None:
        scale = _t_binary("mul", scale, w)
    y = _t_binary("mul", _t_binary("sub", x, mean.view(view)), scale.view(view))
    return _t_binary("add", y, b.view(view)) if b is not None else y


# --------------------------------------------------------------------------- sums, rows and losses
@triton.jit
def _tl_partial(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(part_ptr + tl.program_id(0), tl.sum(v, axis=0))


@triton.jit
def _tl_total(part_ptr, out_ptr, n_parts, scale, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for s in range(0, n_parts, BLOCK):
        k = s + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + k, mask=k < n_parts, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) * scale)


def _t_sum(x, denom=1.0):
    """sum of all elements of x divided by denom, a 0-d tensor of x's dtype (fp32 for others)."""
    x = x.contiguous()
    n = x.numel()
    block = $SUMB
    parts = torch.zeros(max(1, triton.cdiv(n, block)), dtype=torch.float32, device=x.device)
    if n:
        _tl_partial[(triton.cdiv(n, block),)](x, parts, n, BLOCK=block, num_warps=4)
    out = torch.empty((), dtype=x.dtype if x.is_floating_point() else torch.float32, device=x.device)
    _tl_total[(1,)](parts, out, parts.numel(), 1.0 / denom, BLOCK=1024, num_warps=4)
    return out


@triton.jit
def _tl_rows(a_ptr, b_ptr, c_ptr, t_ptr, out_ptr, valid_ptr, n_rows, R, p1, p2, KIND: tl.constexpr,
             ROWS: tl.constexpr, BLOCK_R: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = rows < n_rows
    base = rows.to(tl.int64)[:, None] * R
    s1 = tl.zeros([ROWS, BLOCK_R], tl.float32)
    s2 = tl.zeros([ROWS, BLOCK_R], tl.float32)
    s3 = tl.zeros([ROWS, BLOCK_R], tl.float32)
    mx = tl.full([ROWS, BLOCK_R], -float("inf"), tl.float32)
    if KIND == "ce":
        for r0 in range(0, R, BLOCK_R):
            r = r0 + tl.arange(0, BLOCK_R)
            m = rmask[:, None] & (r[None, :] < R)
            mx = tl.maximum(mx, tl.load(a_ptr + base + r[None, :], mask=m, other=-float("inf")).to(tl.float32))
    top = tl.max(mx, axis=1)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = rmask[:, None] & (r[None, :] < R)
        x = tl.load(a_ptr + base + r[None, :], mask=m, other=0.0).to(tl.float32)
        if KIND == "ce":
            s1 += tl.where(m, tl.exp(x - top[:, None]), 0.0)
        else:
            y = tl.load(b_ptr + base + r[None, :], mask=m, other=0.0).to(tl.float32)
            if KIND == "cos":
                s1 += x * y
                s2 += x * x
                s3 += y * y
            elif KIND == "pdist":
                s1 += tl.where(m, tl.exp(p1 * tl.log(tl.abs(x - y + p2))), 0.0)
            else:
                z = tl.load(c_ptr + base + r[None, :], mask=m, other=0.0).to(tl.float32)
                dp = x - y + p2
                dn = x - z + p2
                s1 += tl.where(m, dp * dp, 0.0)
                s2 += tl.where(m, dn * dn, 0.0)
    ok = rmask
    if KIND == "ce":
        tgt = tl.load(t_ptr + rows, mask=rmask, other=0).to(tl.int64)
        ok = rmask & (tgt != p1)
        pick = tl.load(a_ptr + rows.to(tl.int64) * R + tl.where(ok, tgt, 0), mask=ok, other=0.0).to(tl.float32)
        res = tl.where(ok, tl.log(tl.sum(s1, axis=1)) + top - pick, 0.0)
    elif KIND == "cos":
        res = tl.sum(s1, axis=1) / tl.sqrt(tl.maximum(tl.sum(s2, axis=1) * tl.sum(s3, axis=1), p1 * p1))
    elif KIND == "pdist":
        res = tl.exp(tl.log(tl.sum(s1, axis=1)) / p1)
    else:
        res = tl.maximum(tl.sqrt(tl.sum(s1, axis=1)) - tl.sqrt(tl.sum(s2, axis=1)) + p1, 0.0)
    tl.store(out_ptr + rows, res, mask=rmask)
    tl.store(valid_ptr + rows, tl.where(ok, 1.0, 0.0), mask=rmask)


def _t_rows(kind, a, b=None, c=None, t=None, p1=0.0, p2=0.0):
    """One fp32 value per row of 2-D a (and b, c): ce (targets t, ignore index p1), cos (eps p1),
    pdist (p p1, eps p2), triplet (margin p1, eps p2); and a 0/1 weight per row."""
    if not _is_t(a) or a.dim() != 2:
        raise _Unsupported(f"{kind} of this input")
    a = a.contiguous()
    b = b.contiguous() if b is not None else None
    c = c.contiguous() if c is not None else None
    n_rows, R = a.shape
    out = torch.empty(n_rows, dtype=torch.float32, device=a.device)
    valid = torch.empty(n_rows, dtype=torch.float32, device=a.device)
    if n_rows:
        grid = lambda meta: (triton.cdiv(n_rows, meta["ROWS"]),)
        _tl_rows[grid](a, b if b is not None else a, c if c is not None else a, t if t is not None else a, out, valid,
                       n_rows, R, float(p1), float(p2), KIND=kind, ROWS=$ROWS, BLOCK_R=$RBLOCK, num_warps=4)
    return out, valid


def _t_rowwise(kind, a, b, dim, p1, p2=0.0):
    """A per-row value of a and b along `dim` (moved last), shaped like the inputs without it."""
    shape = list(torch.broadcast_shapes(a.shape, b.shape))
    dim = dim % len(shape)
    a = a.expand(shape).movedim(dim, -1)
    b = b.expand(shape).movedim(dim, -1)
    lead = a.shape[:-1]
    out, _ = _t_rows(kind, a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1]), p1=p1, p2=p2)
    return out.view(lead).to(a.dtype)


def _t_reduce_loss(v, reduction, batch=1):
    if reduction == "none":
        return v
    if reduction == "sum":
        return _t_sum(v)
    if reduction == "batchmean":
        return _t_sum(v, batch)
    if reduction == "mean":
        return _t_sum(v, max(v.numel(), 1))
    raise _Unsupported(f"reduction {reduction!r}")


# --------------------------------------------------------------------------- recurrent layers
@triton.jit
def _tl_rnn_step(gx_ptr, h_ptr, c_ptr, w_ptr, b_ptr, hout_ptr, cout_ptr, seq_ptr, B, H, G, seq_row, seq_off,
                 MODE: tl.constexpr, HAS_B: tl.constexpr, IEEE: tl.constexpr, BLOCK_B: tl.constexpr,
                 BLOCK_H: tl.constexpr, BLOCK_K: tl.constexpr):
    rb = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    rh = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    bm = rb < B
    hm = rh < H
    m2 = bm[:, None] & hm[None, :]
    a0 = tl.zeros((BLOCK_B, BLOCK_H), tl.float32)
    a1 = tl.zeros((BLOCK_B, BLOCK_H), tl.float32)
    a2 = tl.zeros((BLOCK_B, BLOCK_H), tl.float32)
    a3 = tl.zeros((BLOCK_B, BLOCK_H), tl.float32)
    for k0 in range(0, H, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        km = rk < H
        hk = tl.load(h_ptr + rb[:, None] * H + rk[None, :], mask=bm[:, None] & km[None, :], other=0.0)
        wm = km[:, None] & hm[None, :]
        w0 = tl.load(w_ptr + rh[None, :] * H + rk[:, None], mask=wm, other=0.0)
        if IEEE:
            a0 = tl.dot(hk, w0, a0, input_precision="ieee")
        else:
            a0 = tl.dot(hk, w0, a0)
        if MODE >= 2:
            w1 = tl.load(w_ptr + (H + rh[None, :]) * H + rk[:, None], mask=wm, other=0.0)
            w2 = tl.load(w_ptr + (2 * H + rh[None, :]) * H + rk[:, None], mask=wm, other=0.0)
            if IEEE:
                a1 = tl.dot(hk, w1, a1, input_precision="ieee")
                a2 = tl.dot(hk, w2, a2, input_precision="ieee")
            else:
                a1 = tl.dot(hk, w1, a1)
                a2 = tl.dot(hk, w2, a2)
        if MODE == 2:
            w3 = tl.load(w_ptr + (3 * H + rh[None, :]) * H + rk[:, None], mask=wm, other=0.0)
            if IEEE:
                a3 = tl.dot(hk, w3, a3, input_precision="ieee")
            else:
                a3 = tl.dot(hk, w3, a3)
    gbase = rb[:, None] * (G * H) + rh[None, :]
    if HAS_B:
        a0 += tl.load(b_ptr + rh, mask=hm, other=0.0)[None, :]
        if MODE >= 2:
            a1 += tl.load(b_ptr + H + rh, mask=hm, other=0.0)[None, :]
            a2 += tl.load(b_ptr + 2 * H + rh, mask=hm, other=0.0)[None, :]
        if MODE == 2:
            a3 += tl.load(b_ptr + 3 * H + rh, mask=hm, other=0.0)[None, :]
    x0 = tl.load(gx_ptr + gbase, mask=m2, other=0.0).to(tl.float32)
    hprev = tl.load(h_ptr + rb[:, None] * H + rh[None, :], mask=m2, other=0.0).to(tl.float32)
    if MODE == 0:
        h = _tl_tanh(x0 + a0)
    elif MODE == 1:
        h = tl.maximum(x0 + a0, 0.0)
    elif MODE == 2:
        x1 = tl.load(gx_ptr + gbase + H, mask=m2, other=0.0).to(tl.float32)
        x2 = tl.load(gx_ptr + gbase + 2 * H, mask=m2, other=0.0).to(tl.float32)
        x3 = tl.load(gx_ptr + gbase + 3 * H, mask=m2, other=0.0).to(tl.float32)
        cprev = tl.load(c_ptr + rb[:, None] * H + rh[None, :], mask=m2, other=0.0).to(tl.float32)
        ig = 1.0 / (1.0 + tl.exp(-(x0 + a0)))
        fg = 1.0 / (1.0 + tl.exp(-(x1 + a1)))
        gg = _tl_tanh(x2 + a2)
        og = 1.0 / (1.0 + tl.exp(-(x3 + a3)))
        c = fg * cprev + ig * gg
        h = og * _tl_tanh(c)
        tl.store(cout_ptr + rb[:, None] * H + rh[None, :], c.to(cout_ptr.dtype.element_ty), mask=m2)
    else:
        x1 = tl.load(gx_ptr + gbase + H, mask=m2, other=0.0).to(tl.float32)
        x2 = tl.load(gx_ptr + gbase + 2 * H, mask=m2, other=0.0).to(tl.float32)
        r = 1.0 / (1.0 + tl.exp(-(x0 + a0)))
        z = 1.0 / (1.0 + tl.exp(-(x1 + a1)))
        n = _tl_tanh(x2 + r * a2)
        h = (1.0 - z) * n + z * hprev
    tl.store(hout_ptr + rb[:, None] * H + rh[None, :], h.to(hout_ptr.dtype.element_ty), mask=m2)
    tl.store(seq_ptr + seq_off + rb[:, None].to(tl.int64) * seq_row + rh[None, :], h.to(seq_ptr.dtype.element_ty),
             mask=m2)


_RNN_GATES = {0: 1, 1: 1, 2: 4, 3: 3}


def _t_rnn_layer(mode, x, h, c, w_ih, w_hh, b_ih, b_hh, out, col, reverse):
    """One layer and direction over x (T, B, In): writes out[:, :, col:col + H]; returns (h, c)."""
    T, B = x.shape[0], x.shape[1]
    H = w_hh.shape[1]
    G = _RNN_GATES[mode]
    gx = _t_linear(x.reshape(T * B, -1), w_ih, b_ih).view(T, B, G * H)
    h, c = h.contiguous(), (c.contiguous() if c is not None else h)
    row = out.shape[2]
    for step in range(T):
        t = T - 1 - step if reverse else step
        h_new = torch.empty_like(h)
        c_new = torch.empty_like(h) if mode == 2 else h_new
        grid = lambda meta: (triton.cdiv(B, meta["BLOCK_B"]), triton.cdiv(H, meta["BLOCK_H"]))
        _tl_rnn_step[grid](gx[t], h, c, w_hh.contiguous(), b_hh if b_hh is not None else h, h_new, c_new, out, B, H, G,
                           row, t * B * row + col, MODE=mode, HAS_B=b_hh is not None, IEEE=x.dtype == torch.float32,
                           BLOCK_B=min($RNN_B, max(16, triton.next_power_of_2(B))), BLOCK_H=$RNN_H, BLOCK_K=$RNN_K,
                           num_warps=4)
        h, c = h_new, (c_new if mode == 2 else c)
    return h, c


def _t_rnn(mode, x, hx, weights, layers, dirs, batch_first, has_bias):
    """nn.RNN (mode 0 tanh, 1 relu), nn.LSTM (2), nn.GRU (3) with their flat weights in module
    order; hx: None, h0, or (h0, c0). Returns what the module returns."""
    if not _is_t(x) or not x.is_floating_point() or x.dim() not in (2, 3):
        raise _Unsupported("recurrent layer on this input")
    unbatched = x.dim() == 2
    if unbatched:
        x = x.unsqueeze(1)
    elif batch_first:
        x = x.transpose(0, 1)
    T, B = x.shape[0], x.shape[1]
    H = weights[1].shape[1]
    h0, c0 = (hx if isinstance(hx, (tuple, list)) else (hx, None))
    if h0 is None:
        h0 = torch.zeros(layers * dirs, B, H, dtype=x.dtype, device=x.device)
    elif unbatched:
        h0 = h0.unsqueeze(1)
    if mode == 2 and c0 is None:
        c0 = torch.zeros(layers * dirs, B, H, dtype=x.dtype, device=x.device)
    elif c0 is not None and unbatched:
        c0 = c0.unsqueeze(1)
    per = 4 if has_bias else 2
    hs, cs = [], []
    feed = x
    for layer in range(layers):
        out = torch.empty((T, B, dirs * H), dtype=x.dtype, device=x.device)
        for d in range(dirs):
            k = layer * dirs + d
            w = weights[k * per:(k + 1) * per]
            b_ih, b_hh = (w[2], w[3]) if has_bias else (None, None)
            h, c = _t_rnn_layer(mode, feed.contiguous(), h0[k], c0[k] if c0 is not None else None, w[0], w[1], b_ih,
                                b_hh, out, d * H, d == 1)
            hs.append(h)
            cs.append(c)
        feed = out
    out = feed
    if unbatched:
        out = out.squeeze(1)
    elif batch_first:
        out = out.transpose(0, 1).contiguous()
    hn = torch.stack(hs)
    if unbatched:
        hn = hn.squeeze(1)
    if mode == 2:
        cn = torch.stack(cs)
        return out, (hn, cn.squeeze(1) if unbatched else cn)
    return out, hn


def _t_cell(mode, x, hx, w_ih, w_hh, b_ih, b_hh):
    """nn.RNNCell / LSTMCell / GRUCell: one step."""
    unbatched = x.dim() == 1
    if unbatched:
        x = x.unsqueeze(0)
    B, H = x.shape[0], w_hh.shape[1]
    h, c = (hx if isinstance(hx, (tuple, list)) else (hx, None))
    if h is None:
        h = torch.zeros(B, H, dtype=x.dtype, device=x.device)
    elif unbatched:
        h = h.unsqueeze(0)
    if mode == 2:
        c = torch.zeros(B, H, dtype=x.dtype, device=x.device) if c is None else (c.unsqueeze(0) if unbatched else c)
    out = torch.empty((1, B, H), dtype=x.dtype, device=x.device)
    h, c = _t_rnn_layer(mode, x.unsqueeze(0), h, c, w_ih, w_hh, b_ih, b_hh, out, 0, False)
    if unbatched:
        h, c = h.squeeze(0), (c.squeeze(0) if c is not None else None)
    return (h, c) if mode == 2 else h
'''
