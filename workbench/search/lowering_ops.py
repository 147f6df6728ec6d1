"""What `lowering` reads from a traced graph's nodes, and the elementwise ops it fuses into runs:
which fx nodes are elementwise (`ew_parts`) and each op's Triton (fp32) expression over operand
expressions (`unary_expr`, `ew_expr`, `literal`)."""
from __future__ import annotations

import operator
from typing import Any


# =========================================================================== node helpers
def val(n) -> Any:
    """A node's meta value (a meta tensor, a tuple, a number), None for a non-node."""
    return n.meta.get("val") if hasattr(n, "meta") else None


def is_tensor(n) -> bool:
    import torch

    return isinstance(val(n), torch.Tensor)


def is_float(n) -> bool:
    return is_tensor(n) and val(n).dtype.is_floating_point


def arg(node, i: int, name: str, default: Any = None) -> Any:
    """Argument `name` of a call node: by keyword, else position `i` (None: keyword only)."""
    if name in node.kwargs:
        return node.kwargs[name]
    if i is not None and i < len(node.args):
        return node.args[i]
    return default


def op_name(node, modules: dict) -> str | None:
    """`relu`, `matmul`, ... for call_function / call_method; the module class name for call_module."""
    if node.op == "call_function":
        name = getattr(node.target, "__name__", None)
        return {"truediv": "div", "floordiv": "floordiv", "getitem": "getitem"}.get(name, name)
    if node.op == "call_method":
        return str(node.target)
    if node.op == "call_module":
        return type(modules.get(node.target)).__name__
    return None


def dims_of(dim: Any, ndim: int) -> list[int] | None:
    """A dim argument as sorted non-negative dims; None for all dims; raises ValueError otherwise."""
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = [dim]
    if not isinstance(dim, (list, tuple)) or not all(isinstance(d, int) for d in dim):
        raise ValueError(f"dim {dim!r}")
    return sorted({d % ndim for d in dim}) if ndim else []


# =========================================================================== elementwise ops
def _f(x: Any) -> str:
    return repr(float(x))


def _gelu(a: str, approximate: str) -> str | None:
    if approximate == "none":
        return f"(0.5 * {a} * (1.0 + tl.math.erf({a} * 0.7071067811865476)))"
    if approximate == "tanh":
        inner = f"(0.7978845608028654 * ({a} + 0.044715 * {a} * {a} * {a}))"
        return f"(0.5 * {a} * (1.0 + {_tanh(inner)}))"
    return None


def _tanh(a: str) -> str:
    return f"(2.0 / (1.0 + tl.exp(-2.0 * {a})) - 1.0)"


def _softplus(a: str, beta: float = 1.0, threshold: float = 20.0) -> str:
    b = _f(beta)
    return f"tl.where({a} * {b} > {_f(threshold)}, {a}, tl.log(1.0 + tl.exp({a} * {b})) / {b})"


def unary_expr(name: str, a: str, p: dict[str, Any]) -> str | None:
    """Triton (fp32) expression of unary op `name` on `a` with parameters `p`, or None."""
    if name in ("relu", "ReLU"):
        return f"tl.maximum({a}, 0.0)"
    if name in ("relu6", "ReLU6"):
        return f"tl.minimum(tl.maximum({a}, 0.0), 6.0)"
    if name in ("leaky_relu", "LeakyReLU"):
        s = p.get("negative_slope", 0.01)
        return f"tl.where({a} >= 0.0, {a}, {a} * {_f(s)})"
    if name in ("elu", "ELU", "celu", "CELU"):
        al = _f(p.get("alpha", 1.0))
        arg_ = f"{a} / {al}" if name.lower() == "celu" else a
        return f"tl.where({a} > 0.0, {a}, {al} * (tl.exp({arg_}) - 1.0))"
    if name in ("selu", "SELU"):
        return f"(1.0507009873554805 * tl.where({a} > 0.0, {a}, 1.6732632423543772 * (tl.exp({a}) - 1.0)))"
    if name in ("gelu", "GELU"):
        return _gelu(a, p.get("approximate", "none"))
    if name in ("silu", "SiLU"):
        return f"({a} / (1.0 + tl.exp(-{a})))"
    if name in ("mish", "Mish"):
        return f"({a} * {_tanh(_softplus(a))})"
    if name in ("sigmoid", "Sigmoid"):
        return f"(1.0 / (1.0 + tl.exp(-{a})))"
    if name in ("logsigmoid", "LogSigmoid"):
        return f"(-{_softplus('(-' + a + ')')})"
    if name in ("tanh", "Tanh"):
        return _tanh(a)
    if name in ("hardtanh", "Hardtanh", "clamp", "clip", "clamp_min", "clamp_max"):
        if name in ("hardtanh", "Hardtanh"):
            lo, hi = p.get("min_val", -1.0), p.get("max_val", 1.0)
        else:
            lo, hi = p.get("min"), p.get("max")
            if name == "clamp_min":
                lo, hi = p.get("min"), None
            if name == "clamp_max":
                lo, hi = None, p.get("max")
        if not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in (lo, hi)):
            return None
        if lo is None and hi is None:
            return None
        e = a
        if lo is not None:
            e = f"tl.maximum({e}, {_f(lo)})"
        if hi is not None:
            e = f"tl.minimum({e}, {_f(hi)})"
        return e
    if name in ("hardsigmoid", "Hardsigmoid"):
        return f"tl.minimum(tl.maximum({a} / 6.0 + 0.5, 0.0), 1.0)"
    if name in ("hardswish", "Hardswish"):
        return f"({a} * tl.minimum(tl.maximum({a} + 3.0, 0.0), 6.0) / 6.0)"
    if name in ("softplus", "Softplus"):
        return _softplus(a, p.get("beta", 1.0), p.get("threshold", 20.0))
    if name in ("softsign", "Softsign"):
        return f"({a} / (1.0 + tl.abs({a})))"
    if name in ("tanhshrink", "Tanhshrink"):
        return f"({a} - {_tanh(a)})"
    simple = {
        "exp": "tl.exp({a})", "log": "tl.log({a})", "log2": "tl.log2({a})", "exp2": "tl.exp2({a})",
        "log1p": "tl.log(1.0 + {a})", "expm1": "(tl.exp({a}) - 1.0)", "abs": "tl.abs({a})", "neg": "(-{a})",
        "sqrt": "tl.sqrt({a})", "rsqrt": "(1.0 / tl.sqrt({a}))", "reciprocal": "(1.0 / {a})",
        "square": "({a} * {a})", "sin": "tl.sin({a})", "cos": "tl.cos({a})", "erf": "tl.math.erf({a})",
        "floor": "tl.floor({a})", "ceil": "tl.ceil({a})", "log10": "(tl.log({a}) * 0.4342944819032518)",
        "sign": "tl.where({a} > 0.0, 1.0, tl.where({a} < 0.0, -1.0, 0.0))",
        "logical_not": "tl.where({a} == 0.0, 1.0, 0.0)",
        "dropout": "{a}", "Dropout": "{a}", "Dropout1d": "{a}", "Dropout2d": "{a}", "Dropout3d": "{a}",
        "alpha_dropout": "{a}", "feature_alpha_dropout": "{a}", "dropout1d": "{a}", "dropout2d": "{a}",
        "dropout3d": "{a}", "Identity": "{a}",
    }
    if name in simple:
        return simple[name].format(a=a)
    return None


def _pow(a: str, e: Any) -> str | None:
    if isinstance(e, bool) or not isinstance(e, (int, float)):
        return None
    if float(e).is_integer() and 0 <= e <= 4:
        return "(" + " * ".join([a] * int(e)) + ")" if e else "1.0"
    if e == 0.5:
        return f"tl.sqrt({a})"
    if e == -1:
        return f"(1.0 / {a})"
    if e == -0.5:
        return f"(1.0 / tl.sqrt({a}))"
    return f"tl.exp({_f(e)} * tl.log({a}))"


_BINARY = {"add": "({a} + {b})", "sub": "({a} - {b})", "mul": "({a} * {b})", "div": "({a} / {b})",
           "true_divide": "({a} / {b})", "multiply": "({a} * {b})", "subtract": "({a} - {b})",
           "divide": "({a} / {b})", "rsub": "({b} - {a})",
           "maximum": "tl.maximum({a}, {b})", "minimum": "tl.minimum({a}, {b})", "fmax": "tl.maximum({a}, {b})",
           "fmin": "tl.minimum({a}, {b})", "max": "tl.maximum({a}, {b})", "min": "tl.minimum({a}, {b})",
           "gt": "tl.where({a} > {b}, 1.0, 0.0)", "lt": "tl.where({a} < {b}, 1.0, 0.0)",
           "ge": "tl.where({a} >= {b}, 1.0, 0.0)", "le": "tl.where({a} <= {b}, 1.0, 0.0)",
           "eq": "tl.where({a} == {b}, 1.0, 0.0)", "ne": "tl.where({a} != {b}, 1.0, 0.0)",
           "logical_and": "tl.where(({a} != 0.0) & ({b} != 0.0), 1.0, 0.0)",
           "logical_or": "tl.where(({a} != 0.0) | ({b} != 0.0), 1.0, 0.0)",
           "xlogy": "tl.where({a} == 0.0, 0.0, {a} * tl.log({b}))"}
_OPERATOR = {operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "div",
             operator.neg: "neg", operator.pow: "pow", operator.gt: "gt", operator.lt: "lt", operator.ge: "ge",
             operator.le: "le", operator.eq: "eq", operator.ne: "ne", operator.abs: "abs",
             operator.invert: "logical_not", operator.and_: "logical_and", operator.or_: "logical_or"}
_INPLACE = {"add_": "add", "sub_": "sub", "mul_": "mul", "div_": "div", "relu_": "relu", "clamp_": "clamp",
            "sigmoid_": "sigmoid", "tanh_": "tanh", "neg_": "neg", "exp_": "exp", "masked_fill_": "masked_fill"}


def ew_parts(node, modules: dict) -> tuple[str, list, dict[str, Any]] | None:
    """(op, operands, parameters) of an elementwise node: operands are fx nodes or numbers in
    the op's order; None when the node is no elementwise op this lowering renders."""
    if node.op == "call_function" and node.target in _OPERATOR:
        return _OPERATOR[node.target], list(node.args), {}
    name = op_name(node, modules)
    if name is None:
        return None
    if node.op == "call_module":
        mod = modules[node.target]
        p = {k: getattr(mod, k) for k in ("negative_slope", "alpha", "approximate", "min_val", "max_val", "beta",
                                            "threshold") if hasattr(mod, k)}
        if name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "Identity") or unary_expr(name, "a", p):
            return name, list(node.args[:1]), p
        return None
    name = _INPLACE.get(name, name)
    p = dict(node.kwargs)
    args = list(node.args)
    if name in ("add", "sub") and (p.get("alpha", 1) != 1):
        return None
    if name in ("leaky_relu",) and len(args) > 1:
        p["negative_slope"] = args[1]
    if name in ("elu", "celu") and len(args) > 1:
        p["alpha"] = args[1]
    if name == "hardtanh" and len(args) > 1:
        p["min_val"] = args[1]
        if len(args) > 2:
            p["max_val"] = args[2]
    if name in ("clamp", "clip") and len(args) > 1:
        p["min"] = args[1]
        if len(args) > 2:
            p["max"] = args[2]
    if name in ("clamp_min", "clamp_max") and len(args) > 1:
        p["min" if name == "clamp_min" else "max"] = args[1]
    if name == "softplus":
        if len(args) > 1:
            p["beta"] = args[1]
        if len(args) > 2:
            p["threshold"] = args[2]
    if name.startswith("dropout") or name in ("alpha_dropout", "feature_alpha_dropout"):
        return name, args[:1], {}
    if name == "pow":
        return name, args[:2], p
    if name in ("where",) and len(args) == 3:
        return name, args, p
    if name == "masked_fill" and len(args) == 3:
        return name, args, p
    if name in ("div", "true_divide", "divide") and p.get("rounding_mode") is not None:
        return None
    if name in _BINARY and len(args) == 2:
        return name, args, {k: v for k, v in p.items() if k != "alpha"}
    if name in ("max", "min") and len(args) == 2 and hasattr(args[1], "op"):
        return name, args, p
    if len(args) >= 1 and unary_expr(name, "a", p) is not None:
        return name, args[:1], {k: v for k, v in p.items() if k != "inplace"}
    return None


def ew_expr(name: str, ops: list[str], p: dict[str, Any], raw: list) -> str | None:
    """The expression of an elementwise op over operand expressions `ops`."""
    if name == "pow":
        if isinstance(raw[1], (int, float)) and not isinstance(raw[1], bool):
            return _pow(ops[0], raw[1])
        if isinstance(raw[0], (int, float)):
            return f"tl.exp({ops[1]} * tl.log({ops[0]}))"
        return f"tl.exp({ops[1]} * tl.log({ops[0]}))"
    if name == "where":
        return f"tl.where({ops[0]} != 0.0, {ops[1]}, {ops[2]})"
    if name == "masked_fill":
        return f"tl.where({ops[1]} != 0.0, {ops[2]}, {ops[0]})"
    if name in _BINARY:
        return _BINARY[name].format(a=ops[0], b=ops[1])
    return unary_expr(name, ops[0], p)


def literal(v: Any) -> str | None:
    """A Python number (or inf / nan) as a Triton fp32 literal expression."""
    if isinstance(v, bool):
        return "1.0" if v else "0.0"
    if isinstance(v, (int, float)):
        f = float(v)
        if f != f:
            return 'float("nan")'
        if f in (float("inf"), float("-inf")):
            return f'float("{"-" if f < 0 else ""}inf")'
        return repr(f)
    return None
