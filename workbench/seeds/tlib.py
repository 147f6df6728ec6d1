"""The Triton library embedded in generic seeds (`generic.py`): one kernel per op family, every
size, dim and flag read at run time, so a seed written with it runs at any size.

`SOURCE` is the library's text (a `string.Template`: `$name` tile sizes) and `render(profile)`
fills it for a GPU or for Triton's interpreter (the CPU path, where a program's cost is mostly
Python overhead and a few large tiles run far faster than many small ones). Tests render it and
check every entry against PyTorch.

Entry points (all arithmetic in fp32, results in the op's dtype; each raises `_Unsupported`
for an argument it does not handle, so a seed fails loudly instead of falling back to PyTorch):
  _t_unary(op, x, p0, p1)       relu, gelu, sigmoid, ... (`UNARY`), p0 / p1 its parameters
  _t_binary(op, a, b)           add, sub, mul, div, pow, maximum, minimum, comparisons; tensors of
                                broadcastable shapes (up to 6 dims) or a tensor and a number
  _t_where(c, a, b)             torch.where / masked_fill
  _t_reduce(op, x, dim, keepdim)  sum, mean, amax, amin, prod, norm2, norm1, norminf, argmax,
                                argmin, max_dim, min_dim over any dims
  _t_softmax(x, dim, log)       softmax / log-softmax over any dim
  _t_scan(x, dim, prod)         cumsum / cumprod over any dim
  _t_matmul(a, b) / _t_linear(x, w, b)   2-D, batched, broadcast, matrix-vector
  _t_conv(x, w, b, stride, padding, dilation, groups, transposed, output_padding)
  _t_pool(x, d, kernel, stride, padding, dilation, ceil_mode, is_max, count_pad, divisor, adaptive)
  _t_norm(kind, x, w, b, eps, ndims, groups)   layer / rms / group / instance
  _t_batchnorm(x, mean, var, w, b, eps)
  _t_rows(kind, a, b, c, t, p1, p2)   per-row cross entropy, cosine similarity, distances, triplet
  _t_sum(x, denom)              sum of all elements / denom
  _t_rnn(mode, x, hx, weights, layers, dirs, batch_first, hidden)   RNN / LSTM / GRU, and cells
"""
from __future__ import annotations

import string

_NP2 = "triton.next_power_of_2"
#: Launch sizes: literals on a GPU (the search's mutation operators tune them); in the interpreter
#: expressions of the sizes, so a small dimension does not pay for a large masked tile.
TILES = {
    "gpu": {"EW": "1024", "BM": "64", "BN": "64", "BK": "32", "ROWS": "4", "RBLOCK": "1024", "CR": "64",
            "CI": "16", "NROWS": "1", "NBLOCK": "1024", "CONV_BM": "64", "CONV_BN": "64", "CONV_BK": "32",
            "POOL": "256", "RNN_B": "16", "RNN_H": "64", "RNN_K": "32", "SUMB": "1024"},
    "interpreter": {
        "EW": "262144", "BM": f"min(256, max(16, {_NP2}(M)))", "BN": f"min(256, max(16, {_NP2}(N)))",
        "BK": f"min(256, max(16, {_NP2}(K)))", "RBLOCK": f"min(16384, {_NP2}(R))",
        "ROWS": f"max(1, min(1024, 262144 // min(16384, {_NP2}(R))))", "CR": f"min(1024, {_NP2}(R))",
        "CI": f"min(256, {_NP2}(inner))", "NBLOCK": f"min(16384, {_NP2}(n_cols))",
        "NROWS": f"max(1, min(1024, 262144 // min(16384, {_NP2}(n_cols))))",
        "CONV_BM": f"min(4096, max(16, {_NP2}(M)))", "CONV_BN": f"min(128, max(16, {_NP2}(OCG)))",
        "CONV_BK": f"min(256, max(16, {_NP2}(KTOT)))", "POOL": "262144", "RNN_B": "128", "RNN_H": "256",
        "RNN_K": f"min(256, max(16, {_NP2}(H)))", "SUMB": "262144"},
}

UNARY = ("relu", "relu6", "leaky_relu", "elu", "celu", "selu", "gelu", "gelu_tanh", "silu", "mish", "sigmoid",
         "logsigmoid", "tanh", "hardtanh", "hardsigmoid", "hardswish", "softplus", "softsign", "tanhshrink", "exp",
         "log", "log2", "log1p", "expm1", "abs", "neg", "sqrt", "rsqrt", "reciprocal", "square", "sin", "cos",
         "erf", "floor", "ceil", "sign", "clamp", "clamp_min", "clamp_max", "logical_not", "identity", "powc")
BINARY = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "gt", "lt", "ge", "le", "eq", "ne",
          "logical_and", "logical_or", "rsub", "xlogy", "smooth_l1", "huber", "kl", "bce", "sqdiff", "absdiff")


def render(profile: str = "gpu") -> str:
    """The library's source for `profile` ("gpu" or "interpreter")."""
    return string.Template(SOURCE).substitute(TILES[profile])


SOURCE = r'''
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


def _t_mm3(a3, b3, bias=None):
    """(B, M, K) @ (B, K, N) (+ bias over N), a batch of 1 broadcast, as a new (B, M, N) tensor."""
    BT = max(a3.shape[0], b3.shape[0])
    M, K, N = a3.shape[1], a3.shape[2], b3.shape[2]
    out = torch.empty((BT, M, N), dtype=a3.dtype, device=a3.device)
    if out.numel() == 0:
        return out
    if K == 0:
        return out.zero_() + (bias if bias is not None else 0)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]), BT)
    _tl_mm[grid](a3, b3, bias if bias is not None else a3, out, M, N, K,
                 a3.stride(0) if a3.shape[0] > 1 else 0, a3.stride(1), a3.stride(2),
                 b3.stride(0) if b3.shape[0] > 1 else 0, b3.stride(1), b3.stride(2),
                 HAS_BIAS=bias is not None, IEEE=a3.dtype == torch.float32, BLOCK_M=$BM, BLOCK_N=$BN,
                 BLOCK_K=$BK, num_warps=4)
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


# --------------------------------------------------------------------------- convolution
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
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
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

# The calls a rewritten forward makes (`generic.py`): the op's torch name and its arguments as
# the reference passed them. Arguments are bound by the torch signature's names, since a
# candidate may not introspect (`inspect` is not importable in the sandbox).
DISPATCH = r'''
def _bind(args, kw, names, defaults=()):
    """args / kw bound to `names` (positional order), missing ones from `defaults` (name -> value)."""
    out = dict(defaults)
    for n, a in zip(names, args):
        out[n] = a
    if len(args) > len(names):
        raise _Unsupported("too many arguments")
    for k, v in kw.items():
        if k not in names:
            raise _Unsupported(f"argument {k}")
        out[k] = v
    return out


_ACT = {"relu": (), "relu6": (), "selu": (), "silu": (), "mish": (), "sigmoid": (), "logsigmoid": (), "tanh": (),
        "hardsigmoid": (), "hardswish": (), "softsign": (), "tanhshrink": (), "exp": (), "log": (), "log2": (),
        "log1p": (), "expm1": (), "abs": (), "neg": (), "negative": (), "sqrt": (), "rsqrt": (), "reciprocal": (),
        "square": (), "sin": (), "cos": (), "erf": (), "floor": (), "ceil": (), "sign": (), "logical_not": ()}
_BIN = {"add": "add", "sub": "sub", "subtract": "sub", "mul": "mul", "multiply": "mul", "div": "div",
        "divide": "div", "true_divide": "div", "maximum": "maximum", "minimum": "minimum", "fmax": "maximum",
        "fmin": "minimum", "gt": "gt", "greater": "gt", "lt": "lt", "less": "lt", "ge": "ge", "le": "le", "eq": "eq",
        "ne": "ne", "logical_and": "logical_and", "logical_or": "logical_or", "xlogy": "xlogy", "rsub": "rsub"}
_RED = {"sum": "sum", "mean": "mean", "amax": "amax", "amin": "amin", "prod": "prod"}
_DIMS = {1: 1, 2: 2, 3: 3}


def _pow(x, e):
    if not _is_t(x):
        if not _is_t(e):
            raise _Unsupported("pow of numbers")
        return _t_binary("pow", x, e)
    if _is_t(e):
        return _t_binary("pow", x, e)
    e = float(e)
    if e == 1.0:
        return _t_unary("identity", x)
    if e == 2.0:
        return _t_unary("square", x)
    if e == 0.5:
        return _t_unary("sqrt", x)
    if e == -1.0:
        return _t_unary("reciprocal", x)
    flag = (1.0 if int(e) % 2 == 0 else -1.0) if e.is_integer() else 0.0
    return _t_unary("powc", x, e, flag)


def _loss(name, args, kw):
    if name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy"):
        extra = {"smooth_l1_loss": ("beta", 1.0), "huber_loss": ("delta", 1.0)}.get(name)
        names = ["input", "target", "size_average", "reduce", "reduction"] + ([extra[0]] if extra else [])
        if name == "binary_cross_entropy":
            names = ["input", "target", "weight", "size_average", "reduce", "reduction"]
        b = _bind(args, kw, names, {"reduction": "mean", "weight": None, "size_average": None, "reduce": None,
                                    **({extra[0]: extra[1]} if extra else {})})
        if b.get("weight") is not None or b["size_average"] is not None or b["reduce"] is not None:
            raise _Unsupported("legacy loss arguments")
        op = {"mse_loss": "sqdiff", "l1_loss": "absdiff", "smooth_l1_loss": "smooth_l1", "huber_loss": "huber",
              "binary_cross_entropy": "bce"}[name]
        p0 = b[extra[0]] if extra else 0.0
        v = _t_nary(op, b["input"], b["target"], None, p0)
        return _t_reduce_loss(v, b["reduction"])
    if name == "kl_div":
        b = _bind(args, kw, ["input", "target", "size_average", "reduce", "reduction", "log_target"],
                  {"reduction": "mean", "log_target": False, "size_average": None, "reduce": None})
        if b["log_target"]:
            raise _Unsupported("log_target")
        v = _t_nary("kl", b["input"], b["target"])
        return _t_reduce_loss(v, b["reduction"], b["input"].shape[0] if b["input"].dim() else 1)
    if name == "cross_entropy":
        b = _bind(args, kw, ["input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction",
                             "label_smoothing"], {"weight": None, "ignore_index": -100, "reduction": "mean",
                                                  "label_smoothing": 0.0, "size_average": None, "reduce": None})
        x, t = b["input"], b["target"]
        if b["weight"] is not None or b["label_smoothing"] or x.dim() != 2 or t.dtype not in (torch.int64, torch.int32):
            raise _Unsupported("cross entropy of this kind")
        v, ok = _t_rows("ce", x, t=t.contiguous(), p1=b["ignore_index"])
        if b["reduction"] == "none":
            return v.to(x.dtype)
        if b["reduction"] == "sum":
            return _t_sum(v).to(x.dtype)
        return _t_binary("div", _t_sum(v), _t_sum(ok)).to(x.dtype)
    if name == "cosine_similarity":
        b = _bind(args, kw, ["x1", "x2", "dim", "eps"], {"dim": 1, "eps": 1e-8})
        return _t_rowwise("cos", b["x1"], b["x2"], b["dim"], b["eps"])
    if name == "pairwise_distance":
        b = _bind(args, kw, ["x1", "x2", "p", "eps", "keepdim"], {"p": 2.0, "eps": 1e-6, "keepdim": False})
        out = _t_rowwise("pdist", b["x1"], b["x2"], -1, b["p"], b["eps"])
        return out.unsqueeze(-1) if b["keepdim"] else out
    if name == "triplet_margin_loss":
        b = _bind(args, kw, ["anchor", "positive", "negative", "margin", "p", "eps", "swap", "size_average", "reduce",
                             "reduction"], {"margin": 1.0, "p": 2.0, "eps": 1e-6, "swap": False, "reduction": "mean",
                                            "size_average": None, "reduce": None})
        a = b["anchor"]
        if b["p"] != 2 or b["swap"] or a.dim() != 2:
            raise _Unsupported("triplet margin loss of this kind")
        v, _ = _t_rows("triplet", a, b["positive"], b["negative"], p1=b["margin"], p2=b["eps"])
        return _t_reduce_loss(v.to(a.dtype), b["reduction"])
    raise _Unsupported(name)


def _t_einsum(eq, *ops):
    """A two-operand einsum without repeated indices in one operand, as a batched matmul."""
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
        ops = tuple(ops[0])
    eq = eq.replace(" ", "")
    if len(ops) != 2 or "->" not in eq or "." in eq:
        raise _Unsupported(f"einsum {eq}")
    lhs, out = eq.split("->")
    sa, sb = lhs.split(",")
    a, b = ops
    if len(set(sa)) != len(sa) or len(set(sb)) != len(sb) or len(sa) != a.dim() or len(sb) != b.dim():
        raise _Unsupported(f"einsum {eq}")
    batch = [c for c in out if c in sa and c in sb]
    left = [c for c in out if c in sa and c not in sb]
    right = [c for c in out if c in sb and c not in sa]
    con = [c for c in sa if c in sb and c not in out]
    if set(sa) - set(batch + left + con) or set(sb) - set(batch + right + con):
        raise _Unsupported(f"einsum {eq} sums an index of one operand")
    size = {c: a.shape[sa.index(c)] for c in sa}
    size.update({c: b.shape[sb.index(c)] for c in sb})

    def prod(cs):
        n = 1
        for c in cs:
            n *= size[c]
        return n

    a3 = a.permute(*[sa.index(c) for c in batch + left + con]).reshape(prod(batch), prod(left), prod(con))
    b3 = b.permute(*[sb.index(c) for c in batch + con + right]).reshape(prod(batch), prod(con), prod(right))
    res = _t_mm3(a3, b3).view(*[size[c] for c in batch + left + right])
    order = batch + left + right
    return res.permute(*[order.index(c) for c in out]).contiguous()


def _inplace(x, out):
    """The reference's in-place op: the result written into its input (which others may read)."""
    if not _is_t(x) or x.shape != out.shape:
        raise _Unsupported("in-place op on this input")
    x.copy_(out)
    return x


def _t_fn(name, *args, **kw):
    """torch.<name> / F.<name> / tensor.<name> (the tensor first) on the library, or _Unsupported.
    An `inplace=True` argument writes the result into the input, as the reference does."""
    if kw.get("inplace") is True or (name in ("leaky_relu", "elu", "celu", "hardtanh")
                                     and any(a is True for a in args[2:])):
        kw = {k: v for k, v in kw.items() if k != "inplace"}
        return _inplace(args[0], _t_fn(name, *[a for a in args if a is not True], **kw))
    if name == "einsum":
        return _t_einsum(*args)
    if name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
        b = _bind(args, kw, ["input", "p", "training", "inplace"], {"p": 0.5, "training": True, "inplace": False})
        if b["training"] and b["p"] > 0:
            raise _Unsupported("dropout while training")
        return b["input"]
    if name in _ACT:
        b = _bind(args, kw, ["input", "inplace"], {"inplace": False})
        return _t_unary("neg" if name == "negative" else name, b["input"])
    if name == "leaky_relu":
        b = _bind(args, kw, ["input", "negative_slope", "inplace"], {"negative_slope": 0.01, "inplace": False})
        return _t_unary("leaky_relu", b["input"], b["negative_slope"])
    if name in ("elu", "celu"):
        b = _bind(args, kw, ["input", "alpha", "inplace"], {"alpha": 1.0, "inplace": False})
        return _t_unary(name, b["input"], b["alpha"])
    if name == "gelu":
        b = _bind(args, kw, ["input", "approximate"], {"approximate": "none"})
        return _t_unary("gelu" if b["approximate"] == "none" else "gelu_tanh", b["input"])
    if name == "softplus":
        b = _bind(args, kw, ["input", "beta", "threshold"], {"beta": 1.0, "threshold": 20.0})
        return _t_unary("softplus", b["input"], b["beta"], b["threshold"])
    if name == "hardtanh":
        b = _bind(args, kw, ["input", "min_val", "max_val", "inplace"], {"min_val": -1.0, "max_val": 1.0,
                                                                         "inplace": False})
        return _t_unary("hardtanh", b["input"], b["min_val"], b["max_val"])
    if name in ("clamp", "clip"):
        b = _bind(args, kw, ["input", "min", "max"], {"min": None, "max": None})
        lo, hi = b["min"], b["max"]
        if _is_t(lo) or _is_t(hi):
            x = b["input"]
            if lo is not None:
                x = _t_binary("maximum", x, lo)
            if hi is not None:
                x = _t_binary("minimum", x, hi)
            return x
        if lo is None and hi is None:
            raise _Unsupported("clamp without bounds")
        if lo is None:
            return _t_unary("clamp_max", b["input"], hi)
        if hi is None:
            return _t_unary("clamp_min", b["input"], lo)
        return _t_unary("clamp", b["input"], lo, hi)
    if name in ("clamp_min", "clamp_max"):
        return _t_unary(name, args[0], args[1] if len(args) > 1 else kw.get("min", kw.get("max")))
    if name in _BIN:
        b = _bind(args, kw, ["input", "other", "alpha", "rounding_mode"], {"alpha": 1, "rounding_mode": None})
        if b["rounding_mode"] is not None:
            raise _Unsupported("rounding_mode")
        other = b["other"]
        if b["alpha"] != 1:
            other = _t_binary("mul", other, b["alpha"]) if _is_t(other) else other * b["alpha"]
        return _t_binary(_BIN[name], b["input"], other)
    if name == "pow":
        b = _bind(args, kw, ["input", "exponent"])
        return _pow(b["input"], b["exponent"])
    if name == "where":
        b = _bind(args, kw, ["condition", "input", "other"])
        return _t_where(b["condition"], b["input"], b["other"])
    if name == "masked_fill":
        b = _bind(args, kw, ["input", "mask", "value"])
        return _t_where(b["mask"], b["value"], b["input"])
    if name in ("max", "min") and (len(args) > 1 and _is_t(args[1]) or _is_t(kw.get("other"))):
        return _t_binary("maximum" if name == "max" else "minimum", args[0], args[1] if len(args) > 1 else kw["other"])
    if name in _RED or name in ("max", "min", "argmax", "argmin"):
        b = _bind(args, kw, ["input", "dim", "keepdim", "dtype"], {"dim": None, "keepdim": False, "dtype": None})
        if b["dtype"] is not None:
            raise _Unsupported("dtype argument")
        op = _RED.get(name, name)
        if name in ("max", "min"):
            op = (name + "_dim") if b["dim"] is not None else ("amax" if name == "max" else "amin")
        return _t_reduce(op, b["input"], b["dim"], b["keepdim"])
    if name == "norm":
        b = _bind(args, kw, ["input", "p", "dim", "keepdim", "out", "dtype"], {"p": "fro", "dim": None,
                                                                                "keepdim": False})
        op = {"fro": "norm2", 2: "norm2", 1: "norm1", float("inf"): "norminf"}.get(b["p"])
        if op is None:
            raise _Unsupported(f"norm p={b['p']}")
        return _t_reduce(op, b["input"], b["dim"], b["keepdim"])
    if name in ("softmax", "log_softmax"):
        b = _bind(args, kw, ["input", "dim", "_stacklevel", "dtype"], {"dim": None, "dtype": None})
        if b["dtype"] is not None:
            raise _Unsupported("dtype argument")
        return _t_softmax(b["input"], b["dim"], name == "log_softmax")
    if name in ("cumsum", "cumprod"):
        b = _bind(args, kw, ["input", "dim", "dtype"], {"dtype": None})
        if b["dtype"] is not None:
            raise _Unsupported("dtype argument")
        return _t_scan(b["input"], b["dim"], name == "cumprod")
    if name in ("matmul", "mm", "bmm"):
        b = _bind(args, kw, ["input", "other"] if name == "matmul" else ["input", "mat2"])
        return _t_matmul(b["input"], b.get("other", b.get("mat2")))
    if name == "linear":
        b = _bind(args, kw, ["input", "weight", "bias"], {"bias": None})
        return _t_linear(b["input"], b["weight"], b["bias"])
    if name in ("conv1d", "conv2d", "conv3d"):
        b = _bind(args, kw, ["input", "weight", "bias", "stride", "padding", "dilation", "groups"],
                  {"bias": None, "stride": 1, "padding": 0, "dilation": 1, "groups": 1})
        return _t_conv(b["input"], b["weight"], b["bias"], b["stride"], b["padding"], b["dilation"], b["groups"])
    if name in ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
        b = _bind(args, kw, ["input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"],
                  {"bias": None, "stride": 1, "padding": 0, "output_padding": 0, "groups": 1, "dilation": 1})
        return _t_conv(b["input"], b["weight"], b["bias"], b["stride"], b["padding"], b["dilation"], b["groups"],
                       True, b["output_padding"])
    if name in ("max_pool1d", "max_pool2d", "max_pool3d"):
        b = _bind(args, kw, ["input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"],
                  {"stride": None, "padding": 0, "dilation": 1, "ceil_mode": False, "return_indices": False})
        if b["return_indices"]:
            raise _Unsupported("return_indices")
        return _t_pool(b["input"], int(name[-2]), b["kernel_size"], b["stride"], b["padding"], b["dilation"],
                       b["ceil_mode"], True)
    if name in ("avg_pool1d", "avg_pool2d", "avg_pool3d"):
        b = _bind(args, kw, ["input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                             "divisor_override"], {"stride": None, "padding": 0, "ceil_mode": False,
                                                   "count_include_pad": True, "divisor_override": None})
        return _t_pool(b["input"], int(name[-2]), b["kernel_size"], b["stride"], b["padding"], 1, b["ceil_mode"],
                       False, b["count_include_pad"], b["divisor_override"])
    if name in ("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
                "adaptive_max_pool2d", "adaptive_max_pool3d"):
        b = _bind(args, kw, ["input", "output_size", "return_indices"], {"return_indices": False})
        if b["return_indices"]:
            raise _Unsupported("return_indices")
        return _t_pool(b["input"], int(name[-2]), b["output_size"], is_max="max" in name, adaptive=True)
    if name == "layer_norm":
        b = _bind(args, kw, ["input", "normalized_shape", "weight", "bias", "eps"], {"weight": None, "bias": None,
                                                                                     "eps": 1e-5})
        return _t_norm("layer", b["input"], b["weight"], b["bias"], b["eps"], len(_tuple(b["normalized_shape"], 1)))
    if name == "rms_norm":
        b = _bind(args, kw, ["input", "normalized_shape", "weight", "eps"], {"weight": None, "eps": None})
        eps = b["eps"] if b["eps"] is not None else torch.finfo(b["input"].dtype).eps
        return _t_norm("rms", b["input"], b["weight"], None, eps, len(_tuple(b["normalized_shape"], 1)))
    if name == "group_norm":
        b = _bind(args, kw, ["input", "num_groups", "weight", "bias", "eps"], {"weight": None, "bias": None,
                                                                               "eps": 1e-5})
        return _t_norm("group", b["input"], b["weight"], b["bias"], b["eps"], groups=b["num_groups"])
    if name == "batch_norm":
        b = _bind(args, kw, ["input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps"],
                  {"weight": None, "bias": None, "training": False, "momentum": 0.1, "eps": 1e-5})
        if b["training"] or b["running_mean"] is None:
            raise _Unsupported("batch norm with batch statistics")
        return _t_batchnorm(b["input"], b["running_mean"], b["running_var"], b["weight"], b["bias"], b["eps"])
    return _loss(name, args, kw)


_OPS = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "pow": "pow", "matmul": "matmul", "gt": "gt",
        "lt": "lt", "ge": "ge", "le": "le", "eq": "eq", "ne": "ne", "and": "logical_and", "or": "logical_or"}
_PY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
       "pow": lambda a, b: a ** b, "matmul": lambda a, b: a @ b, "gt": lambda a, b: a > b, "lt": lambda a, b: a < b,
       "ge": lambda a, b: a >= b, "le": lambda a, b: a <= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
       "and": lambda a, b: a & b, "or": lambda a, b: a | b}


def _t_iop(name, a, b):
    """`a op= b`: on a tensor, the result written into a (as PyTorch does); else the operator."""
    if not _is_t(a):
        return _t_op(name, a, b)
    return _inplace(a, _t_op(name, a, b))


def _t_op(name, a, b=None):
    """A Python operator: on tensors the library's kernel, on anything else the operator itself."""
    if name == "neg":
        return _t_unary("neg", a) if _is_t(a) else -a
    if name == "not":
        return _t_unary("logical_not", a) if _is_t(a) else ~a
    if not _is_t(a) and not _is_t(b):
        return _PY[name](a, b)
    if name == "matmul":
        return _t_matmul(a, b)
    if name == "pow":
        return _pow(a, b)
    return _t_binary(_OPS[name], a, b)


def _rnn_mode(m):
    kind = type(m).__name__
    if kind in ("LSTM", "LSTMCell"):
        return 2
    if kind in ("GRU", "GRUCell"):
        return 3
    return 1 if getattr(m, "nonlinearity", "tanh") == "relu" else 0


def _t_mod(m, *args, **kw):
    """A submodule call: a module type the library implements, reading the module's attributes
    and parameters; a Sequential, each child in turn; a module class of this file, its own
    (rewritten) forward; anything else _Unsupported."""
    kind = type(m).__name__
    if type(m).__module__ == __name__:
        return m(*args, **kw)
    if kind == "Sequential":
        x = args[0]
        for child in m:
            x = _t_mod(child, x)
        return x
    x = args[0] if args else None
    if getattr(m, "inplace", False) is True and kind not in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
                                                              "AlphaDropout"):
        return _inplace(x, _t_leaf(kind, m, x, args, kw))
    return _t_leaf(kind, m, x, args, kw)


def _t_leaf(kind, m, x, args, kw):
    """A leaf module the library implements (see _t_mod)."""
    if kind in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Identity"):
        if m.training and getattr(m, "p", 0) > 0:
            raise _Unsupported("dropout while training")
        return x
    simple = {"ReLU": "relu", "ReLU6": "relu6", "SELU": "selu", "SiLU": "silu", "Mish": "mish", "Sigmoid": "sigmoid",
              "LogSigmoid": "logsigmoid", "Tanh": "tanh", "Hardsigmoid": "hardsigmoid", "Hardswish": "hardswish",
              "Softsign": "softsign", "Tanhshrink": "tanhshrink"}
    if kind in simple:
        return _t_unary(simple[kind], x)
    if kind == "LeakyReLU":
        return _t_unary("leaky_relu", x, m.negative_slope)
    if kind in ("ELU", "CELU"):
        return _t_unary(kind.lower(), x, m.alpha)
    if kind == "GELU":
        return _t_unary("gelu" if m.approximate == "none" else "gelu_tanh", x)
    if kind == "Softplus":
        return _t_unary("softplus", x, m.beta, m.threshold)
    if kind == "Hardtanh":
        return _t_unary("hardtanh", x, m.min_val, m.max_val)
    if kind == "Flatten":
        return x.flatten(m.start_dim, m.end_dim)
    if kind in ("Softmax", "LogSoftmax"):
        return _t_softmax(x, m.dim, kind == "LogSoftmax")
    if kind == "Linear":
        return _t_linear(x, m.weight, m.bias)
    if kind in ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"):
        if m.padding_mode != "zeros" or (kind.startswith("ConvT") and (args[1:] or kw)):
            raise _Unsupported(f"{kind} of this kind")
        t = kind.startswith("ConvT")
        return _t_conv(x, m.weight, m.bias, m.stride, m.padding, m.dilation, m.groups, t,
                       m.output_padding if t else 0)
    if kind in ("MaxPool1d", "MaxPool2d", "MaxPool3d"):
        if m.return_indices:
            raise _Unsupported("return_indices")
        return _t_pool(x, int(kind[-2]), m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode, True)
    if kind in ("AvgPool1d", "AvgPool2d", "AvgPool3d"):
        return _t_pool(x, int(kind[-2]), m.kernel_size, m.stride, m.padding, 1, m.ceil_mode, False,
                       m.count_include_pad, getattr(m, "divisor_override", None))
    if kind in ("AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
                "AdaptiveMaxPool3d"):
        if getattr(m, "return_indices", False):
            raise _Unsupported("return_indices")
        return _t_pool(x, int(kind[-2]), m.output_size, is_max="Max" in kind, adaptive=True)
    if kind in ("LayerNorm", "RMSNorm"):
        shape = _tuple(m.normalized_shape, 1)
        eps = m.eps if m.eps is not None else torch.finfo(x.dtype).eps
        return _t_norm("layer" if kind == "LayerNorm" else "rms", x, m.weight, getattr(m, "bias", None), eps, len(shape))
    if kind == "GroupNorm":
        return _t_norm("group", x, m.weight, m.bias, m.eps, groups=m.num_groups)
    if kind in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d") and not m.track_running_stats:
        return _t_norm("instance", x, m.weight, m.bias, m.eps)
    if kind in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d"):
        if m.training or m.running_mean is None:
            raise _Unsupported("batch norm with batch statistics")
        return _t_batchnorm(x, m.running_mean, m.running_var, m.weight, m.bias, m.eps)
    if kind in ("RNN", "LSTM", "GRU"):
        if getattr(m, "proj_size", 0) or kw:
            raise _Unsupported(f"{kind} of this kind")
        return _t_rnn(_rnn_mode(m), x, args[1] if len(args) > 1 else None, list(m._flat_weights), m.num_layers,
                      2 if m.bidirectional else 1, m.batch_first, m.bias)
    if kind in ("RNNCell", "LSTMCell", "GRUCell"):
        return _t_cell(_rnn_mode(m), x, args[1] if len(args) > 1 else None, m.weight_ih, m.weight_hh, m.bias_ih,
                       m.bias_hh)
    losses = {"MSELoss": "mse_loss", "L1Loss": "l1_loss", "SmoothL1Loss": "smooth_l1_loss", "HuberLoss": "huber_loss",
              "KLDivLoss": "kl_div", "BCELoss": "binary_cross_entropy", "CrossEntropyLoss": "cross_entropy"}
    if kind in losses:
        extra = {"SmoothL1Loss": {"beta": getattr(m, "beta", 1.0)}, "HuberLoss": {"delta": getattr(m, "delta", 1.0)},
                 "KLDivLoss": {"log_target": getattr(m, "log_target", False)},
                 "CrossEntropyLoss": {"ignore_index": getattr(m, "ignore_index", -100),
                                      "label_smoothing": getattr(m, "label_smoothing", 0.0),
                                      "weight": getattr(m, "weight", None)}}.get(kind, {})
        return _loss(losses[kind], args, {"reduction": m.reduction, **extra})
    if kind == "TripletMarginLoss":
        return _loss("triplet_margin_loss", args, {"margin": m.margin, "p": m.p, "eps": m.eps, "swap": m.swap,
                                                   "reduction": m.reduction})
    if kind == "CosineSimilarity":
        return _t_rowwise("cos", args[0], args[1], m.dim, m.eps)
    if kind == "PairwiseDistance":
        return _loss("pairwise_distance", args, {"p": m.norm, "eps": m.eps, "keepdim": m.keepdim})
    raise _Unsupported(f"module {kind}")
'''


def render_all(profile: str = "gpu") -> str:
    """The kernels and the dispatch layer for `profile`."""
    return render(profile) + DISPATCH
