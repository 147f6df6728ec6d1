"""Part of the Triton library of generic seeds (see `tlib.py`): the calls a rewritten forward
makes (`generic.py`), each op by its torch name with its arguments as the reference passed them.
Arguments are bound by the torch signature's names, since a candidate may not introspect
(`inspect` is not importable in the sandbox). Plain Python text (no template).
"""

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
