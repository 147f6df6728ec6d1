"""Part of the Triton library of generic seeds (see `tlib.py`): elementwise ops with broadcast,
reductions, softmax and scans along any dim, matmuls. A `string.Template` (`$name` tile sizes).
"""

CORE = r'''
class _Unsupported(RuntimeError):
    """An argument this library does not handle (the seed fails rather than run PyTorch)."""


@triton.jit
def _tl_tanh(x):
    return 2.0 / (1.0 + tl.exp(-2.0 * x)) - 1.0


@triton.jit
def _tl_softplus(x, beta, threshold):
    return tl.where(x * beta > threshold, x, tl.log(1.0 + tl.exp(x * beta)) / beta)


@triton.jit
def _tl_apply1(x, p0, p1, OP: tl.constexpr):
    if OP == "relu":
        y = tl.maximum(x, 0.0)
    elif OP == "relu6":
        y = tl.minimum(tl.maximum(x, 0.0), 6.0)
    elif OP == "leaky_relu":
        y = tl.where(x >= 0.0, x, x * p0)
    elif OP == "elu":
        y = tl.where(x > 0.0, x, p0 * (tl.exp(x) - 1.0))
    elif OP == "celu":
        y = tl.where(x > 0.0, x, p0 * (tl.exp(x / p0) - 1.0))
    elif OP == "selu":
        y = 1.0507009873554805 * tl.where(x > 0.0, x, 1.6732632423543772 * (tl.exp(x) - 1.0))
    elif OP == "gelu":
        y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    elif OP == "gelu_tanh":
        y = 0.5 * x * (1.0 + _tl_tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
    elif OP == "silu":
        y = x / (1.0 + tl.exp(-x))
    elif OP == "mish":
        y = x * _tl_tanh(_tl_softplus(x, 1.0, 20.0))
    elif OP == "sigmoid":
        y = 1.0 / (1.0 + tl.exp(-x))
    elif OP == "logsigmoid":
        y = -_tl_softplus(-x, 1.0, 20.0)
    elif OP == "tanh":
        y = _tl_tanh(x)
    elif OP == "hardtanh":
        y = tl.minimum(tl.maximum(x, p0), p1)
    elif OP == "clamp":
        y = tl.minimum(tl.maximum(x, p0), p1)
    elif OP == "clamp_min":
        y = tl.maximum(x, p0)
    elif OP == "clamp_max":
        y = tl.minimum(x, p0)
    elif OP == "hardsigmoid":
        y = tl.minimum(tl.maximum(x / 6.0 + 0.5, 0.0), 1.0)
    elif OP == "hardswish":
        y = x * tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0) / 6.0
    elif OP == "softplus":
        y = _tl_softplus(x, p0, p1)
    elif OP == "softsign":
        y = x / (1.0 + tl.abs(x))
    elif OP == "tanhshrink":
        y = x - _tl_tanh(x)
    elif OP == "exp":
        y = tl.exp(x)
    elif OP == "log":
        y = tl.log(x)
    elif OP == "log2":
        y = tl.log2(x)
    elif OP == "log1p":
        y = tl.log(1.0 + x)
    elif OP == "expm1":
        y = tl.exp(x) - 1.0
    elif OP == "abs":
        y = tl.abs(x)
    elif OP == "neg":
        y = -x
    elif OP == "sqrt":
        y = tl.sqrt(x)
    elif OP == "rsqrt":
        y = 1.0 / tl.sqrt(x)
    elif OP == "reciprocal":
        y = 1.0 / x
    elif OP == "square":
        y = x * x
    elif OP == "sin":
        y = tl.sin(x)
    elif OP == "cos":
        y = tl.cos(x)
    elif OP == "erf":
        y = tl.math.erf(x)
    elif OP == "floor":
        y = tl.floor(x)
    elif OP == "ceil":
        y = tl.ceil(x)
    elif OP == "sign":
        y = tl.where(x > 0.0, 1.0, tl.where(x < 0.0, -1.0, 0.0))
    elif OP == "logical_not":
        y = tl.where(x == 0.0, 1.0, 0.0)
    elif OP == "powc":
        y = tl.where(p1 != 0.0, tl.exp(p0 * tl.log(tl.abs(x))) * tl.where((x < 0.0) & (p1 < 0.0), -1.0, 1.0),
                     tl.exp(p0 * tl.log(x)))
    else:
        y = x
    return y


@triton.jit
def _tl_apply2(a, b, OP: tl.constexpr):
    if OP == "add":
        y = a + b
    elif OP == "sub":
        y = a - b
    elif OP == "rsub":
        y = b - a
    elif OP == "mul":
        y = a * b
    elif OP == "div":
        y = a / b
    elif OP == "pow":
        y = tl.exp(b * tl.log(a))
    elif OP == "maximum":
        y = tl.maximum(a, b)
    elif OP == "minimum":
        y = tl.minimum(a, b)
    elif OP == "gt":
        y = tl.where(a > b, 1.0, 0.0)
    elif OP == "lt":
        y = tl.where(a < b, 1.0, 0.0)
    elif OP == "ge":
        y = tl.where(a >= b, 1.0, 0.0)
    elif OP == "le":
        y = tl.where(a <= b, 1.0, 0.0)
    elif OP == "eq":
        y = tl.where(a == b, 1.0, 0.0)
    elif OP == "ne":
        y = tl.where(a != b, 1.0, 0.0)
    elif OP == "logical_and":
        y = tl.where((a != 0.0) & (b != 0.0), 1.0, 0.0)
    elif OP == "logical_or":
        y = tl.where((a != 0.0) | (b != 0.0), 1.0, 0.0)
    elif OP == "xlogy":
        y = tl.where(a == 0.0, 0.0, a * tl.log(b))
    elif OP == "sqdiff":
        y = (a - b) * (a - b)
    elif OP == "absdiff":
        y = tl.abs(a - b)
    else:
        y = a
    return y


@triton.jit
def _tl_unary_kernel(x_ptr, out_ptr, n, p0, p1, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.float32)
    y = _tl_apply1(x, p0, p1, OP)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _tl_index(offs, S1, S2, S3, S4, S5, s0, s1, s2, s3, s4, s5):
    r = offs
    i5 = r % S5
    r = r // S5
    i4 = r % S4
    r = r // S4
    i3 = r % S3
    r = r // S3
    i2 = r % S2
    r = r // S2
    i1 = r % S1
    i0 = r // S1
    return i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3 + i4 * s4 + i5 * s5


@triton.jit
def _tl_nary_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n, S1, S2, S3, S4, S5,
                    a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5, c0, c1, c2, c3, c4, c5, av, bv, p0, p1,
                    A_T: tl.constexpr, B_T: tl.constexpr, THREE: tl.constexpr, OP: tl.constexpr,
                    BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if A_T:
        a = tl.load(a_ptr + _tl_index(offs, S1, S2, S3, S4, S5, a0, a1, a2, a3, a4, a5), mask=mask, other=0).to(tl.float32)
    else:
        a = tl.zeros([BLOCK], tl.float32) + av
    if B_T:
        b = tl.load(b_ptr + _tl_index(offs, S1, S2, S3, S4, S5, b0, b1, b2, b3, b4, b5), mask=mask, other=0).to(tl.float32)
    else:
        b = tl.zeros([BLOCK], tl.float32) + bv
    if THREE:
        c = tl.load(c_ptr + _tl_index(offs, S1, S2, S3, S4, S5, c0, c1, c2, c3, c4, c5), mask=mask, other=0).to(tl.float32)
        if OP == "where":
            y = tl.where(c != 0.0, a, b)
        else:
            y = tl.minimum(tl.maximum(c, a), b)
    elif OP == "smooth_l1":
        d = tl.abs(a - b)
        y = tl.where(d < p0, 0.5 * d * d / p0, d - 0.5 * p0)
    elif OP == "huber":
        d = tl.abs(a - b)
        y = tl.where(d < p0, 0.5 * d * d, p0 * (d - 0.5 * p0))
    elif OP == "kl":
        y = tl.where(b > 0.0, b * (tl.log(b) - a), 0.0)
    elif OP == "bce":
        y = -(b * tl.maximum(tl.log(a), -100.0) + (1.0 - b) * tl.maximum(tl.log(1.0 - a), -100.0))
    else:
        y = _tl_apply2(a, b, OP)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def _is_t(x):
    return isinstance(x, torch.Tensor)


def _check(*xs):
    for x in xs:
        if _is_t(x) and x.is_complex():
            raise _Unsupported(f"dtype {x.dtype}")


def _t_unary(op, x, p0=0.0, p1=0.0):
    """An elementwise op of one tensor (see UNARY), p0 / p1 its numeric parameters."""
    if not _is_t(x):
        raise _Unsupported(f"{op} of a {type(x).__name__}")
    _check(x)
    dtype = x.dtype if x.is_floating_point() else (torch.bool if op == "logical_not" else torch.float32)
    if op in ("neg", "abs", "relu", "clamp", "clamp_min", "clamp_max") and not x.is_floating_point():
        dtype = x.dtype
    xc = x.contiguous()
    out = torch.empty(x.shape, dtype=dtype, device=x.device)
    n = out.numel()
    if n:
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        _tl_unary_kernel[grid](xc, out, n, float(p0), float(p1), OP=op, BLOCK=$EW, num_warps=4)
    return out


_COMPARE = ("gt", "lt", "ge", "le", "eq", "ne", "logical_and", "logical_or")


def _strides6(t, shape):
    e = t.expand(shape)
    st = [0] * (6 - len(shape)) + list(e.stride())
    return st


def _t_nary(op, a, b, c=None, p0=0.0, p1=0.0):
    tensors = [x for x in (a, b, c) if _is_t(x)]
    if not tensors:
        raise _Unsupported(f"{op} of numbers")
    _check(*tensors)
    shape = torch.broadcast_shapes(*[x.shape for x in tensors])
    if len(shape) > 6:
        raise _Unsupported("more than 6 dims")
    if op in _COMPARE:
        dtype = torch.bool
    elif c is not None and op == "where":
        dtype = torch.result_type(a, b) if (_is_t(a) or _is_t(b)) else torch.float32
    else:
        dtype = torch.result_type(a, b) if c is None else torch.result_type(c, a)
        if op in ("div", "pow", "xlogy", "smooth_l1", "huber", "kl", "bce") and not dtype.is_floating_point:
            dtype = torch.get_default_dtype()
    out = torch.empty(shape, dtype=dtype, device=tensors[0].device)
    n = out.numel()
    if n == 0:
        return out
    full = [1] * (6 - len(shape)) + list(shape)
    sa = _strides6(a, shape) if _is_t(a) else [0] * 6
    sb = _strides6(b, shape) if _is_t(b) else [0] * 6
    sc = _strides6(c, shape) if _is_t(c) else [0] * 6
    av = float(a) if not _is_t(a) else 0.0
    bv = float(b) if not _is_t(b) else 0.0
    first = tensors[0]
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    _tl_nary_kernel[grid](a if _is_t(a) else first, b if _is_t(b) else first, c if _is_t(c) else first, out, n,
                          *full[1:], *sa, *sb, *sc, av, bv, float(p0), float(p1), A_T=_is_t(a), B_T=_is_t(b),
                          THREE=c is not None, OP=op, BLOCK=$EW, num_warps=4)
    return out


def _t_binary(op, a, b, p0=0.0):
    """An elementwise op of two operands (tensors broadcast together, or a tensor and a number)."""
    if not _is_t(a) and not _is_t(b):
        raise _Unsupported(f"{op} of numbers")
    return _t_nary(op, a, b, None, p0)


def _t_where(c, a, b):
    """torch.where(c, a, b) with tensors or numbers for a and b."""
    return _t_nary("where", a, b, c)


# --------------------------------------------------------------------------- along an axis
def _t_axis_view(x, dims, keepdim):
    nd = x.dim()
    dims = sorted({d % nd for d in dims}) if dims is not None else list(range(nd))
    keep = [d for d in range(nd) if d not in dims]
    out_shape = [1 if d in dims else x.shape[d] for d in range(nd)] if keepdim else [x.shape[d] for d in keep]
    if dims and dims != list(range(dims[0], dims[0] + len(dims))):
        lead = len([d for d in keep if d < dims[0]])
        x = x.permute(*([d for d in keep if d < dims[0]] + dims + [d for d in keep if d > dims[0]]))
    else:
        lead = dims[0] if dims else nd
    x = x.contiguous()
    outer = R = inner = 1
    for s in x.shape[:lead]:
        outer *= s
    for s in x.shape[lead:lead + len(dims)]:
        R *= s
    for s in x.shape[lead + len(dims):]:
        inner *= s
    return x, R, outer, inner, out_shape


@triton.jit
def _tl_prod(a, b):
    return a * b


@triton.jit
def _tl_product(v, axis: tl.constexpr):
    # A product along an axis in log space: exp of the sum of log|v|, the sign from the parity of
    # the count of negatives (a zero gives 0). Triton's generic reduce (tl.reduce with a combine
    # function) steps element by element in the interpreter; sums do not.
    mag = tl.exp(tl.sum(tl.log(tl.abs(v)), axis=axis))
    neg = tl.sum(tl.where(v < 0.0, 1.0, 0.0), axis=axis)
    return tl.where(neg - 2.0 * tl.floor(neg * 0.5) > 0.5, -mag, mag)


@triton.jit
def _tl_red_init(OP: tl.constexpr):
    if OP == "amax":
        v = -float("inf")
    elif OP == "amin":
        v = float("inf")
    elif OP == "prod":
        v = 1.0
    else:
        v = 0.0
    return v


@triton.jit
def _tl_red_step(acc, v, OP: tl.constexpr):
    if OP == "amax":
        r = tl.maximum(acc, v)
    elif OP == "amin":
        r = tl.minimum(acc, v)
    elif OP == "prod":
        r = acc * v
    elif OP == "norm2":
        r = acc + v * v
    elif OP == "norm1":
        r = acc + tl.abs(v)
    elif OP == "norminf":
        r = tl.maximum(acc, tl.abs(v))
    else:
        r = acc + v
    return r


@triton.jit
def _tl_red_final(acc, R, AXIS: tl.constexpr, OP: tl.constexpr):
    if OP == "amax":
        r = tl.max(acc, axis=AXIS)
    elif OP == "amin":
        r = tl.min(acc, axis=AXIS)
    elif OP == "prod":
        r = _tl_product(acc, AXIS)
    elif OP == "norm2":
        r = tl.sqrt(tl.sum(acc, axis=AXIS))
    elif OP == "norminf":
        r = tl.max(acc, axis=AXIS)
    elif OP == "mean":
        r = tl.sum(acc, axis=AXIS) / R
    else:
        r = tl.sum(acc, axis=AXIS)
    return r


@triton.jit
def _tl_reduce_rows(x_ptr, out_ptr, idx_ptr, n_out, R, OP: tl.constexpr, ARG: tl.constexpr, MAXI: tl.constexpr,
                    ROWS: tl.constexpr, BLOCK_R: tl.constexpr):
    pos = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    pmask = pos < n_out
    base = pos.to(tl.int64)[:, None] * R
    init = _tl_red_init(OP)
    acc = tl.full([ROWS, BLOCK_R], init, tl.float32)
    where = tl.zeros([ROWS, BLOCK_R], tl.int64)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = pmask[:, None] & (r[None, :] < R)
        v = tl.load(x_ptr + base + r[None, :], mask=m, other=init).to(tl.float32)
        if ARG:
            if MAXI:
                take = m & (v > acc)
            else:
                take = m & (v < acc)
            acc = tl.where(take, v, acc)
            where = tl.where(take, r[None, :].to(tl.int64) + tl.zeros([ROWS, BLOCK_R], tl.int64), where)
        else:
            acc = tl.where(m, _tl_red_step(acc, v, OP), acc)
    if ARG:
        res = _tl_red_final(acc, R, 1, OP)
        idx = tl.min(tl.where(acc == res[:, None], where, R), axis=1)
        tl.store(idx_ptr + pos, idx, mask=pmask)
    else:
        res = _tl_red_final(acc, R, 1, OP)
    tl.store(out_ptr + pos, res.to(out_ptr.dtype.element_ty), mask=pmask)


@triton.jit
def _tl_reduce_cols(x_ptr, out_ptr, idx_ptr, R, INNER, OP: tl.constexpr, ARG: tl.constexpr, MAXI: tl.constexpr,
                    BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    pos = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    pmask = pos < INNER
    base = o * R * INNER
    init = _tl_red_init(OP)
    acc = tl.full([BLOCK_R, BLOCK_I], init, tl.float32)
    where = tl.zeros([BLOCK_R, BLOCK_I], tl.int64)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = (r[:, None] < R) & pmask[None, :]
        v = tl.load(x_ptr + base + r[:, None] * INNER + pos[None, :], mask=m, other=init).to(tl.float32)
        if ARG:
            if MAXI:
                take = m & (v > acc)
            else:
                take = m & (v < acc)
            acc = tl.where(take, v, acc)
            where = tl.where(take, r[:, None].to(tl.int64) + tl.zeros([BLOCK_R, BLOCK_I], tl.int64), where)
        else:
            acc = tl.where(m, _tl_red_step(acc, v, OP), acc)
    res = _tl_red_final(acc, R, 0, OP)
    if ARG:
        idx = tl.min(tl.where(acc == res[None, :], where, R), axis=0)
        tl.store(idx_ptr + o * INNER + pos, idx, mask=pmask)
    tl.store(out_ptr + o * INNER + pos, res.to(out_ptr.dtype.element_ty), mask=pmask)


class _ValuesIndices:
    """What torch.max / torch.min with a dim return: values and indices, by name or position."""

    def __init__(self, values, indices):
        self.values, self.indices = values, indices

    def __getitem__(self, k):
        return (self.values, self.indices)[k]

    def __iter__(self):
        return iter((self.values, self.indices))


def _axis_launch(kernel_rows, kernel_cols, x, outs, R, outer, inner, **kw):
    if inner == 1:
        grid = lambda meta: (triton.cdiv(outer, meta["ROWS"]),)
        kernel_rows[grid](x, *outs, outer, R, **kw, ROWS=$ROWS, BLOCK_R=$RBLOCK, num_warps=4)
    else:
        grid = lambda meta: (outer, triton.cdiv(inner, meta["BLOCK_I"]))
        kernel_cols[grid](x, *outs, R, inner, **kw, BLOCK_R=$CR, BLOCK_I=$CI, num_warps=4)


def _t_reduce(op, x, dim=None, keepdim=False):
    """A reduction over `dim` (None: all dims; an int or a list). op: sum, mean, amax, amin, prod,
    norm2, norm1, norminf, argmax, argmin, max_dim, min_dim."""
    if not _is_t(x):
        raise _Unsupported(f"{op} of a {type(x).__name__}")
    _check(x)
    if x.dim() == 0:
        dim = None
    dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    arg = op in ("argmax", "argmin", "max_dim", "min_dim")
    if arg and (dims is None and op.endswith("_dim")):
        raise _Unsupported(f"{op} without a dim")
    if arg and dims is None:  # argmax over all elements: of the flattened tensor
        x, dims = x.reshape(-1), [0]
    dtype = x.dtype if x.is_floating_point() else torch.float32
    if op in ("sum", "prod") and not x.is_floating_point():
        dtype = torch.int64 if x.dtype != torch.bool else torch.int64
    xv, R, outer, inner, out_shape = _t_axis_view(x.float() if not x.is_floating_point() else x, dims, keepdim)
    out = torch.empty(out_shape, dtype=dtype if not arg else x.dtype if x.is_floating_point() else torch.float32,
                      device=x.device)
    idx = torch.empty(out_shape, dtype=torch.int64, device=x.device) if arg else out
    if out.numel():
        base = {"argmax": "amax", "max_dim": "amax", "argmin": "amin", "min_dim": "amin"}.get(op, op)
        _axis_launch(_tl_reduce_rows, _tl_reduce_cols, xv, (out, idx), R, outer, inner, OP=base, ARG=arg,
                     MAXI=op in ("argmax", "max_dim"))
    if op in ("argmax", "argmin"):
        return idx
    if arg:
        return _ValuesIndices(out, idx)
    return out


@triton.jit
def _tl_softmax_rows(x_ptr, out_ptr, n_out, R, LOG: tl.constexpr, ROWS: tl.constexpr, BLOCK_R: tl.constexpr):
    pos = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    pmask = pos < n_out
    base = pos.to(tl.int64)[:, None] * R
    mx = tl.full([ROWS, BLOCK_R], -float("inf"), tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = pmask[:, None] & (r[None, :] < R)
        mx = tl.maximum(mx, tl.load(x_ptr + base + r[None, :], mask=m, other=-float("inf")).to(tl.float32))
    top = tl.max(mx, axis=1)
    top = tl.where(top == -float("inf"), 0.0, top)[:, None]
    acc = tl.zeros([ROWS, BLOCK_R], tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = pmask[:, None] & (r[None, :] < R)
        v = tl.load(x_ptr + base + r[None, :], mask=m, other=-float("inf")).to(tl.float32)
        acc += tl.where(m, tl.exp(v - top), 0.0)
    tot = tl.sum(acc, axis=1)[:, None]
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = pmask[:, None] & (r[None, :] < R)
        v = tl.load(x_ptr + base + r[None, :], mask=m, other=0.0).to(tl.float32)
        if LOG:
            y = v - top - tl.log(tot)
        else:
            y = tl.exp(v - top) / tot
        tl.store(out_ptr + base + r[None, :], y.to(out_ptr.dtype.element_ty), mask=m)


@triton.jit
def _tl_softmax_cols(x_ptr, out_ptr, R, INNER, LOG: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    pos = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    pmask = pos < INNER
    base = o * R * INNER
    mx = tl.full([BLOCK_R, BLOCK_I], -float("inf"), tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = (r[:, None] < R) & pmask[None, :]
        v = tl.load(x_ptr + base + r[:, None] * INNER + pos[None, :], mask=m, other=-float("inf")).to(tl.float32)
        mx = tl.maximum(mx, v)
    top = tl.max(mx, axis=0)
    top = tl.where(top == -float("inf"), 0.0, top)[None, :]
    acc = tl.zeros([BLOCK_R, BLOCK_I], tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = (r[:, None] < R) & pmask[None, :]
        v = tl.load(x_ptr + base + r[:, None] * INNER + pos[None, :], mask=m, other=-float("inf")).to(tl.float32)
        acc += tl.where(m, tl.exp(v - top), 0.0)
    tot = tl.sum(acc, axis=0)[None, :]
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = (r[:, None] < R) & pmask[None, :]
        offs = base + r[:, None] * INNER + pos[None, :]
        v = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
        if LOG:
            y = v - top - tl.log(tot)
        else:
            y = tl.exp(v - top) / tot
        tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=m)


def _t_softmax(x, dim, log=False):
    """softmax (log-softmax with `log`) over `dim`."""
    if not _is_t(x) or not x.is_floating_point() or dim is None:
        raise _Unsupported("softmax of a non-float tensor or without a dim")
    if x.dim() == 0:
        return torch.zeros_like(x) if log else torch.ones_like(x)
    shape = x.shape
    xv, R, outer, inner, _ = _t_axis_view(x, [dim], True)
    out = torch.empty((outer, R, inner), dtype=x.dtype, device=x.device)
    if out.numel():
        _axis_launch(_tl_softmax_rows, _tl_softmax_cols, xv, (out,), R, outer, inner, LOG=log)
    return out.view(shape)


@triton.jit
def _tl_scan(x_ptr, out_ptr, R, INNER, PROD: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    pos = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    pmask = pos < INNER
    base = o * R * INNER
    if PROD:
        carry = tl.full([BLOCK_I], 1.0, tl.float32)
    else:
        carry = tl.zeros([BLOCK_I], tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = (r[:, None] < R) & pmask[None, :]
        offs = base + r[:, None] * INNER + pos[None, :]
        if PROD:
            v = tl.load(x_ptr + offs, mask=m, other=1.0).to(tl.float32)
            c = _tl_cumprod(v, 0) * carry[None, :]
            carry = carry * _tl_product(v, 0)
        else:
            v = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
            c = tl.cumsum(v, axis=0) + carry[None, :]
            carry = carry + tl.sum(v, axis=0)
        tl.store(out_ptr + offs, c.to(out_ptr.dtype.element_ty), mask=m)


@triton.jit
def _tl_cumprod(v, axis: tl.constexpr):
    # The running product in log space: exp of the running sum of log|v|, the sign from the parity
    # of the running count of negatives (a zero gives log 0 = -inf, and stays 0 after). Triton's
    # generic scan (tl.cumprod) steps element by element in the interpreter.
    mag = tl.exp(tl.cumsum(tl.log(tl.abs(v)), axis=axis))
    neg = tl.cumsum(tl.where(v < 0.0, 1.0, 0.0), axis=axis)
    return tl.where(neg - 2.0 * tl.floor(neg * 0.5) > 0.5, -mag, mag)


@triton.jit
def _tl_scan_rows(x_ptr, out_ptr, n_out, R, PROD: tl.constexpr, ROWS: tl.constexpr, BLOCK_R: tl.constexpr):
    pos = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    pmask = pos < n_out
    base = pos.to(tl.int64)[:, None] * R
    if PROD:
        carry = tl.full([ROWS], 1.0, tl.float32)
    else:
        carry = tl.zeros([ROWS], tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = pmask[:, None] & (r[None, :] < R)
        if PROD:
            v = tl.load(x_ptr + base + r[None, :], mask=m, other=1.0).to(tl.float32)
            c = _tl_cumprod(v, 1) * carry[:, None]
            carry = carry * _tl_product(v, 1)
        else:
            v = tl.load(x_ptr + base + r[None, :], mask=m, other=0.0).to(tl.float32)
            c = tl.cumsum(v, axis=1) + carry[:, None]
            carry = carry + tl.sum(v, axis=1)
        tl.store(out_ptr + base + r[None, :], c.to(out_ptr.dtype.element_ty), mask=m)


def _t_scan(x, dim, prod=False):
    """cumsum (cumprod with `prod`) along `dim`."""
    if not _is_t(x) or dim is None:
        raise _Unsupported("scan of a non-tensor or without a dim")
    if x.dim() == 0:
        return x.clone()
    dtype = x.dtype if x.is_floating_point() else torch.int64
    xv, R, outer, inner, _ = _t_axis_view(x.float() if not x.is_floating_point() else x, [dim], True)
    out = torch.empty(x.shape, dtype=dtype, device=x.device)
    if out.numel():
        _axis_launch(_tl_scan_rows, _tl_scan, xv, (out,), R, outer, inner, PROD=prod)
    return out


# --------------------------------------------------------------------------- matmul
@triton.jit
def _tl_mm(a_ptr, b_ptr, bias_ptr, out_ptr, M, N, K, sab, sam, sak, sbb, sbk, sbn,
           HAS_BIAS: tl.constexpr, IEEE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
           BLOCK_K: tl.constexpr):
    bid = tl.program_id(2).to(tl.int64)
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(a_ptr + bid * sab + rm[:, None] * sam + ks[None, :] * sak,
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + bid * sbb + ks[:, None] * sbk + rn[None, :] * sbn,
                    mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
    if HAS_BIAS:
        acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = bid * M * N + rm[:, None].to(tl.int64) * N + rn[None, :]
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _tl_mv(m_ptr, v_ptr, bias_ptr, out_ptr, R, K, smb, smr, smk, svb, svk, BIAS: tl.constexpr,
           BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr):
    # out[b, r] = sum_k mat[b, r, k] * vec[b, k] (+ bias: 1 one value, 2 one per r): a product
    # with one side of size 1, a streaming reduction instead of a mostly empty tl.dot tile.
    bid = tl.program_id(1).to(tl.int64)
    rr = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_R,), tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        mat = tl.load(m_ptr + bid * smb + rr[:, None].to(tl.int64) * smr + ks[None, :] * smk,
                      mask=(rr[:, None] < R) & (ks[None, :] < K), other=0.0).to(tl.float32)
        vec = tl.load(v_ptr + bid * svb + ks * svk, mask=ks < K, other=0.0).to(tl.float32)
        acc += tl.sum(mat * vec[None, :], axis=1)
    if BIAS == 1:
        acc += tl.load(bias_ptr).to(tl.float32)
    if BIAS == 2:
        acc += tl.load(bias_ptr + rr, mask=rr < R, other=0.0).to(tl.float32)
    tl.store(out_ptr + bid * R + rr, acc.to(out_ptr.dtype.element_ty), mask=rr < R)


@triton.jit
def _tl_mm_split(a_ptr, b_ptr, part_ptr, M, N, K, KS, sab, sam, sak, sbb, sbk, sbn, IEEE: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # One slice of K (KS long) of one output tile: fp32 partial sums, part[split, b, m, n].
    bid = tl.program_id(2).to(tl.int64)
    split = tl.program_id(1) // tl.cdiv(N, BLOCK_N)
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (tl.program_id(1) % tl.cdiv(N, BLOCK_N)) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for k0 in range(split * KS, tl.minimum(split * KS + KS, K), BLOCK_K):
        ks = k0 + rk
        kmask = (ks < K) & (ks < split * KS + KS)
        a = tl.load(a_ptr + bid * sab + rm[:, None] * sam + ks[None, :] * sak,
                    mask=(rm[:, None] < M) & kmask[None, :], other=0.0)
        b = tl.load(b_ptr + bid * sbb + ks[:, None] * sbk + rn[None, :] * sbn,
                    mask=kmask[:, None] & (rn[None, :] < N), other=0.0)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
    nb = tl.num_programs(2).to(tl.int64)
    offs = ((split.to(tl.int64) * nb + bid) * M + rm[:, None].to(tl.int64)) * N + rn[None, :]
    tl.store(part_ptr + offs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _tl_split_sum(part_ptr, bias_ptr, out_ptr, n, N, SPLIT, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, SPLIT):
        acc += tl.load(part_ptr + s * n + offs, mask=mask, other=0.0)
    if HAS_BIAS:
        acc += tl.load(bias_ptr + offs % N, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)


#: A product with fewer output tiles than _SPLIT_TILES and a K loop of _SPLIT_MIN_STEPS blocks
#: or more splits K over up to _SPLIT_MAX programs per tile (the GPU's SMs are otherwise idle
#: while a few programs walk a long K), each slice _SPLIT_MIN_STEPS // 4 blocks or more.
_SPLIT_TILES = 64
_SPLIT_MIN_STEPS = 64
_SPLIT_MAX = 32


def _t_mm3(a3, b3, bias=None):
    """(B, M, K) @ (B, K, N) (+ bias over N), a batch of 1 broadcast, as a new (B, M, N) tensor.
    N or M of 1: a matrix-vector kernel; few output tiles over a long K: K split over programs.
    The split path's tiles are the plain kernel's (BM, BN, BK) and its other launch sizes are not
    literals, so the mutation operators find no site that only a split product runs."""
    BT = max(a3.shape[0], b3.shape[0])
    M, K, N = a3.shape[1], a3.shape[2], b3.shape[2]
    out = torch.empty((BT, M, N), dtype=a3.dtype, device=a3.device)
    if out.numel() == 0:
        return out
    if K == 0:
        return out.zero_() + (bias if bias is not None else 0)
    sab, sbb = (a3.stride(0) if a3.shape[0] > 1 else 0), (b3.stride(0) if b3.shape[0] > 1 else 0)
    if N == 1 or M == 1:
        if N == 1:  # rows of a times b's column; a bias over N is one value
            mat, vec, R, smb, smr, smk, svb, svk = a3, b3, M, sab, a3.stride(1), a3.stride(2), sbb, b3.stride(1)
        else:       # columns of b (rows of b^T) times a's row; a bias over N is one per row
            mat, vec, R, smb, smr, smk, svb, svk = b3, a3, N, sbb, b3.stride(2), b3.stride(1), sab, a3.stride(2)
        mode = 0 if bias is None else (1 if N == 1 else 2)
        grid = lambda meta: (triton.cdiv(R, meta["BLOCK_R"]), BT)
        _tl_mv[grid](mat, vec, bias if bias is not None else mat, out, R, K, smb, smr, smk, svb, svk, BIAS=mode,
                     BLOCK_R=$MV_R, BLOCK_K=$MV_K)
        return out
    BM = $BM
    BN = $BN
    BK = $BK
    tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN) * BT
    split = 1
    if tiles < _SPLIT_TILES and K >= _SPLIT_MIN_STEPS * BK:
        split = min(_SPLIT_MAX, (2 * _SPLIT_TILES) // tiles, K // (_SPLIT_MIN_STEPS // 4 * BK))
    if split > 1:
        ks = triton.cdiv(triton.cdiv(K, split), BK) * BK
        split = triton.cdiv(K, ks)
        part = torch.empty((split, BT, M, N), dtype=torch.float32, device=a3.device)
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN) * split, BT)
        _tl_mm_split[grid](a3, b3, part, M, N, K, ks, sab, a3.stride(1), a3.stride(2), sbb, b3.stride(1),
                           b3.stride(2), IEEE=a3.dtype == torch.float32, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK)
        n = BT * M * N
        block = min(1024, triton.next_power_of_2(n))
        _tl_split_sum[(triton.cdiv(n, block),)](part, bias if bias is not None else part, out, n, N, split,
                                                HAS_BIAS=bias is not None, BLOCK=block)
        return out
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]), BT)
    _tl_mm[grid](a3, b3, bias if bias is not None else a3, out, M, N, K, sab, a3.stride(1), a3.stride(2),
                 sbb, b3.stride(1), b3.stride(2),
                 HAS_BIAS=bias is not None, IEEE=a3.dtype == torch.float32, BLOCK_M=BM, BLOCK_N=BN,
                 BLOCK_K=BK, num_warps=4)
    return out


def _t_matmul(a, b):
    """torch.matmul semantics: 1-D operands, 2-D, batched with broadcast batch dims."""
    if not (_is_t(a) and _is_t(b)) or not a.is_floating_point() or a.dtype != b.dtype or a.dim() == 0 or b.dim() == 0:
        raise _Unsupported("matmul of these operands")
    if a.dim() == 1 and b.dim() == 1:
        return _t_mm3(a.view(1, 1, -1), b.view(1, -1, 1)).reshape(())
    va, vb = a.dim() == 1, b.dim() == 1
    if va:
        a = a.unsqueeze(0)
    if vb:
        b = b.unsqueeze(-1)
    K, N = a.shape[-1], b.shape[-1]
    if b.dim() == 2:
        lead = a.shape[:-1]
        out = _t_mm3(a.reshape(1, -1, K), b.unsqueeze(0)).view(*lead, N)
    else:
        lead = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a3 = a.expand(*lead, a.shape[-2], K).reshape(-1, a.shape[-2], K)
        b3 = b.expand(*lead, K, N).reshape(-1, K, N)
        out = _t_mm3(a3, b3).view(*lead, a.shape[-2], N)
    if vb:
        out = out.squeeze(-1)
    if va:
        out = out.squeeze(-2)
    return out


def _t_linear(x, w, b=None):
    """F.linear: x @ w.T + b."""
    if not (_is_t(x) and _is_t(w)) or x.dim() == 0:
        raise _Unsupported("linear of these operands")
    K = x.shape[-1]
    lead = x.shape[:-1]
    wt = w.t() if w.dim() == 2 else w.unsqueeze(-1)
    out = _t_mm3(x.reshape(1, -1, K), wt.unsqueeze(0), b)
    return out.view(*lead, wt.shape[-1]) if w.dim() == 2 else out.view(*lead)


'''
