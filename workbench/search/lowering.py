"""Seed kernels for a problem nobody wrote zoo kernels for: the reference's graph lowered to Triton.

`lower(problem)` traces the reference's `Model` with `torch.fx` (on the meta device, at full
size, shapes in each node's meta: `workbench.problems.trace.graph`), then replaces the parts a
template covers with calls to Triton kernels rendered from templates, and keeps every other op
in PyTorch as traced. A *kind* is a set of ops one template family covers; the family kinds
handled here (templates in `lowering_templates`) are:

- `elementwise`: maximal runs of unary, binary and ternary elementwise ops (activations, + - * /,
  pow, min / max, comparisons, where / masked_fill, clamp, eval-mode dropout) whose intermediate
  values are used only inside the run, fused into one kernel; operands of any shape that
  broadcasts to the run's output (a bias of shape (C, 1, 1), a scalar tensor) and Python numbers;
- `matmul`: `@`, `mm`, `bmm`, `matmul` (2-D, batched, broadcast batch, matrix-vector, any
  operand transposed) and linear layers, with the elementwise run that consumes the product
  fused as the epilogue (IEEE fp32 products for fp32 problems, TF32 when `tf32=True`);
- `reduce`: sum, mean, amax / amin, prod, max / min (with or without a dim), argmax / argmin,
  and p = 1, 2, inf, 'fro' norms over any dims (negative or positive, several, all);
- `softmax`: softmax and log-softmax over any one dim;
- `norm`: layer norm over any number of trailing dims, RMS norm, group norm, instance norm,
  and eval-mode batch norm (a per-channel affine, rendered as an elementwise kernel).

Every other op (convolutions, pooling, scans, losses, recurrent layers) stays in PyTorch here;
`workbench.seeds.generic` routes those to Triton without a graph. A variant lowers one set of
kinds, so a problem gets several seeds (all kinds at once, then each alone), each a self-contained
file: the reference class (renamed `_Reference`, so `ModelNew` has its constructor and parameter
names) and a generated `ModelNew.forward`. A variant that lowers nothing is dropped: a file that
only re-runs PyTorch is no seed.

Only the reference (problem code the user chose to load) is traced; no candidate is run here.
"""
from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from workbench.records import Candidate, Problem
from workbench.search import lowering_templates as T

FAMILY_KINDS = ("elementwise", "matmul", "reduce", "softmax", "norm")
#: The kinds `lower` uses by default (the project's kernel-family templates).
FAMILIES = FAMILY_KINDS


class LoweringError(Exception):
    """The reference cannot be traced or lowered (internal: seeds() returns [] then)."""


@dataclass(frozen=True)
class Attr:
    """A parameter or buffer read by its module path (`fc.weight`): a launcher argument."""

    name: str


@dataclass
class Group:
    """Nodes replaced by one launcher call.

    `nodes`: the fx nodes replaced (the last one's value is the group's); `args`: the launcher's
    arguments (fx nodes, `Attr`, Python constants); `render(i, group)`: kernel and launcher
    source, the launcher named `_lowered_{i}`; `body`: for elementwise runs (and matmul
    epilogues), the kernel lines `v{k} = ...` over inputs `x{j}`."""

    kind: str
    nodes: list
    args: list
    render: Callable[[int, "Group"], str] | None = None
    body: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def inputs(self) -> list:
        """Tensor inputs of an elementwise run / epilogue (`x{j}` in its body)."""
        return self.extra.setdefault("inputs", [])


Handler = Callable[["Lowerer", Any], bool]


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


# =========================================================================== the lowerer
class Lowerer:
    """Walks a traced graph once, offering each node to the handlers in order; the first that
    claims it makes or extends a `Group`."""

    def __init__(self, gm, kinds: Sequence[str], handlers: Sequence[tuple[str, Handler]], tf32: bool = False):
        self.gm, self.kinds, self.tf32 = gm, tuple(kinds), tf32
        self.modules = dict(gm.named_modules())
        self.groups: list[Group] = []
        self.group_of: dict[Any, Group] = {}
        self.handlers = [(k, h) for k, h in handlers if k in self.kinds]

    def add(self, g: Group) -> Group:
        self.groups.append(g)
        for n in g.nodes:
            self.group_of[n] = g
        return g

    def run(self) -> None:
        for node in list(self.gm.graph.nodes):
            if node.op not in ("call_function", "call_method", "call_module"):
                continue
            for _, h in self.handlers:
                try:
                    if h(self, node):
                        break
                except (ValueError, TypeError, KeyError, IndexError, AttributeError):
                    continue  # a node a handler cannot read stays in PyTorch


# --------------------------------------------------------------------------- elementwise
def _ew_handler(low: Lowerer, node) -> bool:
    import torch

    if not is_tensor(node):
        return False
    parts = ew_parts(node, low.modules)
    if parts is None:
        return False
    name, operands, p = parts
    out = val(node)
    if out.dtype not in (torch.float32, torch.float16, torch.bfloat16, torch.bool, torch.float64):
        return False
    tensors = [a for a in operands if hasattr(a, "op")]
    if not tensors or any(not is_tensor(a) for a in tensors):
        return False
    for a in tensors:
        t = val(a)
        if t.dim() > out.dim() or t.dtype == torch.complex64:
            return False
        try:
            if tuple(torch.broadcast_shapes(t.shape, out.shape)) != tuple(out.shape):
                return False
        except RuntimeError:
            return False
    p.pop("inplace", None)
    inplace = bool(node.kwargs.get("inplace")) or getattr(low.modules.get(node.target), "inplace", False) \
        or (node.op == "call_method" and str(node.target).endswith("_")) \
        or (name in ("leaky_relu", "elu", "celu", "hardtanh") and node.op == "call_function"
            and any(a is True for a in node.args[2:]))
    if inplace and any(len(a.users) > 1 for a in tensors):
        return False  # the reference overwrites a value that something else reads
    # The run this node joins: the open run (or matmul epilogue) of its single-use producer.
    joined = None
    for a in tensors:
        g = low.group_of.get(a)
        if g is not None and g.kind in ("elementwise", "matmul") and g.extra.get("open", False) \
                and g.nodes[-1] is a and len(a.users) == 1 and tuple(val(a).shape) == tuple(out.shape):
            joined = g
            break
    g = joined or Group("elementwise", [], [], render=_render_ew, extra={"open": True})
    exprs: list[str] = []
    added: list = []
    for a in operands:
        if hasattr(a, "op"):
            if a in g.nodes:
                exprs.append(f"v{g.nodes.index(a)}")
            else:
                if a not in g.inputs:
                    g.inputs.append(a)
                    added.append(a)
                exprs.append(f"x{g.inputs.index(a)}")
        else:
            lit = literal(a)
            if lit is None:
                for x in added:
                    g.inputs.remove(x)
                return False
            exprs.append(lit)
    expr = ew_expr(name, exprs, p, operands)
    if expr is None:
        for x in added:
            g.inputs.remove(x)
        return False
    g.body.append(f"v{len(g.nodes)} = {expr}")
    g.nodes.append(node)
    low.group_of[node] = g
    if joined is None:
        low.groups.append(g)
    return True


def _render_ew(i: int, g: Group) -> str:
    import torch

    out = val(g.nodes[-1])
    n_in = len(g.args)
    dtype = "torch.bool" if out.dtype == torch.bool else None
    if dtype is None:
        floats = [j for j, a in enumerate(g.args) if is_float(a)]
        dtype = f"x{floats[0]}.dtype" if floats else str(out.dtype)
    shape = "torch.broadcast_shapes(" + ", ".join(f"x{j}.shape" for j in range(n_in)) + ")"
    if out.dim() != max(val(a).dim() if hasattr(a, "op") else 0 for a in g.args):
        return ""  # the output is larger than every input (a broadcast of numbers): not rendered
    return T.render_ew(i, n_in, g.body, out.dim(), dtype, shape, g.extra.get("prep"))


# --------------------------------------------------------------------------- matmul
def _mm_handler(low: Lowerer, node) -> bool:
    if not is_float(node) or not node.args:
        return False
    name = op_name(node, low.modules)
    mod = low.modules.get(node.target) if node.op == "call_module" else None
    if mod is not None and type(mod).__name__ == "Linear":
        a, b, bias, linear = node.args[0], Attr(f"{node.target}.weight"), \
            (Attr(f"{node.target}.bias") if mod.bias is not None else None), True
    elif name == "linear" and node.op == "call_function":
        a, b, bias, linear = node.args[0], arg(node, 1, "weight"), arg(node, 2, "bias"), True
    elif (name in ("matmul", "mm", "bmm") or node.target is operator.matmul) and len(node.args) == 2 \
            and not node.kwargs:
        a, b, bias, linear = node.args[0], node.args[1], None, False
    else:
        return False
    if not hasattr(a, "op") or not is_float(a) or val(a).dtype != val(node).dtype:
        return False
    if not linear and (not hasattr(b, "op") or not is_float(b) or val(b).dtype != val(a).dtype):
        return False
    if linear and isinstance(b, Attr) is False and not hasattr(b, "op"):
        return False
    if bias is not None and not isinstance(bias, Attr) and not hasattr(bias, "op"):
        return False
    da = val(a).dim()
    db = val(b).dim() if hasattr(b, "op") else 2
    if da == 0 or db == 0 or (da == 1 and db == 1):
        return False
    vec_b, vec_a = (db == 1 and not linear), (da == 1)
    g = Group("matmul", [node], [a, b, bias], render=_render_mm,
              extra={"open": not (vec_a or vec_b), "linear": linear, "vec_b": vec_b, "vec_a": vec_a,
                     "tf32": low.tf32})
    low.add(g)
    return True


def _render_mm(i: int, g: Group) -> str:
    return T.render_mm(i, len(g.inputs), g.body, g.extra["linear"], g.extra["vec_b"], g.extra["vec_a"],
                       g.extra["tf32"])


# --------------------------------------------------------------------------- along an axis
_REDUCE_NAMES = {"sum": "sum", "mean": "mean", "amax": "amax", "amin": "amin", "prod": "prod", "max": "max",
                 "min": "min", "argmax": "argmax", "argmin": "argmin", "norm": "norm"}


def _reduce_handler(low: Lowerer, node) -> bool:
    name = op_name(node, low.modules) if node.op != "call_module" else None
    if name not in _REDUCE_NAMES or not node.args or not is_float(node.args[0]):
        return False
    x = node.args[0]
    nd = val(x).dim()
    if node.kwargs.get("dtype") is not None or node.kwargs.get("out") is not None:
        return False
    if name == "norm":
        p = arg(node, 1, "p", "fro")
        dim = arg(node, 2, "dim")
        keepdim = arg(node, 3, "keepdim", False)
        op = {"fro": "norm2", 2: "norm2", 2.0: "norm2", 1: "norm1", 1.0: "norm1",
              float("inf"): "norminf"}.get(p)
        if op is None:
            return False
    elif name in ("max", "min"):
        dim = arg(node, 1, "dim")
        if hasattr(dim, "op"):
            return False  # torch.max(a, b): elementwise
        keepdim = arg(node, 2, "keepdim", False)
        op = ("max_dim" if name == "max" else "min_dim") if dim is not None else ("amax" if name == "max" else "amin")
    elif name in ("argmax", "argmin"):
        dim = arg(node, 1, "dim")
        keepdim = arg(node, 2, "keepdim", False)
        op = name
        if dim is None:
            return False
    else:
        dim = arg(node, 1, "dim")
        keepdim = arg(node, 2, "keepdim", False)
        op = name
    if not isinstance(keepdim, bool):
        return False
    dims = dims_of(dim, nd)
    if op.endswith("_dim") or op in ("argmax", "argmin"):
        if dims is None or len(dims) != 1:
            return False
    last = dims is None or dims[-1] == nd - 1 and dims == list(range(dims[0], nd))
    g = Group("reduce", [node], [x], render=lambda i, g, op=op, dims=dims, keepdim=keepdim, last=last:
              T.render_reduce(i, op, dims, keepdim, last))
    low.add(g)
    return True


def _softmax_handler(low: Lowerer, node) -> bool:
    name = op_name(node, low.modules)
    if node.op == "call_module":
        mod = low.modules[node.target]
        if name not in ("Softmax", "LogSoftmax") or mod.dim is None:
            return False
        x, dim, log = node.args[0], mod.dim, name == "LogSoftmax"
    elif name in ("softmax", "log_softmax", "_softmax"):
        x, dim, log = node.args[0], arg(node, 1, "dim"), name == "log_softmax"
        if node.kwargs.get("dtype") is not None or (len(node.args) > 2 and node.args[2] is not None
                                                     and name != "_softmax"):
            return False
    else:
        return False
    if not hasattr(x, "op") or not is_float(x) or not isinstance(dim, int) or val(x).dim() == 0:
        return False
    nd = val(x).dim()
    d = dim % nd
    low.add(Group("softmax", [node], [x], render=lambda i, g, d=d, log=log:
                  T.render_softmax(i, d, log, d == nd - 1)))
    return True


# --------------------------------------------------------------------------- norms
def _attr_or_none(mod, target: str, name: str) -> Attr | None:
    return Attr(f"{target}.{name}") if getattr(mod, name, None) is not None else None


def _norm_handler(low: Lowerer, node) -> bool:
    name = op_name(node, low.modules)
    if not node.args or not hasattr(node.args[0], "op") or not is_float(node.args[0]):
        return False
    x = node.args[0]
    nd = val(x).dim()
    mod = low.modules.get(node.target) if node.op == "call_module" else None
    if mod is not None and name in ("LayerNorm", "RMSNorm"):
        shape = tuple(mod.normalized_shape)
        if tuple(val(x).shape[nd - len(shape):]) != shape:
            return False
        rms = name == "RMSNorm"
        eps = mod.eps if mod.eps is not None else float(__import__("torch").finfo(val(x).dtype).eps)
        w, b = _attr_or_none(mod, node.target, "weight"), _attr_or_none(mod, node.target, "bias")
        low.add(Group("norm", [node], [x, w, b], render=lambda i, g, k=len(shape), e=eps, r=rms:
                      T.render_norm(i, "layer", e, ndims=k, rms=r)))
        return True
    if name == "layer_norm" and node.op == "call_function":
        shape = arg(node, 1, "normalized_shape")
        w, b, eps = arg(node, 2, "weight"), arg(node, 3, "bias"), arg(node, 4, "eps", 1e-5)
        if not isinstance(shape, (list, tuple)) or not all(isinstance(s, int) for s in shape):
            return False
        low.add(Group("norm", [node], [x, w, b], render=lambda i, g, k=len(shape), e=eps:
                      T.render_norm(i, "layer", e, ndims=k)))
        return True
    if mod is not None and name == "GroupNorm" and nd >= 2:
        w, b = _attr_or_none(mod, node.target, "weight"), _attr_or_none(mod, node.target, "bias")
        low.add(Group("norm", [node], [x, w, b], render=lambda i, g, G=mod.num_groups, e=mod.eps:
                      T.render_norm(i, "group", e, groups=G)))
        return True
    if mod is not None and name in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d") and nd >= 3:
        if mod.track_running_stats:
            return False
        w, b = _attr_or_none(mod, node.target, "weight"), _attr_or_none(mod, node.target, "bias")
        low.add(Group("norm", [node], [x, w, b], render=lambda i, g, e=mod.eps: T.render_norm(i, "instance", e)))
        return True
    if mod is not None and name in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d") and nd >= 2:
        if not mod.track_running_stats or mod.running_mean is None:
            return False
        args = [x, Attr(f"{node.target}.running_mean"), Attr(f"{node.target}.running_var")]
        body = f"v0 = (x0 - x1) / tl.sqrt(x2 + {_f(mod.eps)})"
        if mod.weight is not None:
            args += [Attr(f"{node.target}.weight"), Attr(f"{node.target}.bias")]
            body += " * x3 + x4"
        prep = [f"x{j} = x{j}.view(1, -1, *([1] * (x0.dim() - 2)))" for j in range(1, len(args))]
        g = Group("norm", [node], [], render=_render_ew, body=[body], extra={"open": False, "prep": prep})
        g.extra["inputs"] = args
        low.add(g)
        return True
    return False


FAMILY_HANDLERS: tuple[tuple[str, Handler], ...] = (
    ("elementwise", _ew_handler), ("norm", _norm_handler), ("matmul", _mm_handler),
    ("softmax", _softmax_handler), ("reduce", _reduce_handler))


# =========================================================================== rendering
def _trace(problem: Problem, cpu: bool = False):
    """The reference's fx graph on the meta device (`workbench.problems.trace.graph`): at full
    size, or at the CPU sizes with `cpu`; node shapes in `meta["tensor_meta"]`, no annotations."""
    from workbench.problems import load_source, trace

    return trace.graph(load_source(problem.source, name=problem.id, cpu=cpu))


def _reference_source(problem: Problem) -> str:
    """The problem's module without its input functions, `Model` renamed `_Reference`."""
    tree = ast.parse(problem.source)
    body = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ("get_inputs", "get_init_inputs"):
            continue
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            node.name = "_Reference"
        body.append(node)
    tree.body = body
    for node in ast.walk(tree):  # super(Model, self) and other self-references
        if isinstance(node, ast.Name) and node.id == "Model":
            node.id = "_Reference"
    return ast.unparse(tree)


def _group_args(g: Group) -> list:
    if g.kind in ("elementwise",) or g.render is _render_ew:
        return list(g.inputs)
    if g.kind == "matmul":
        return list(g.args) + list(g.inputs)
    return list(g.args)


def _render(problem: Problem, gm, groups: list[Group], label: str) -> str:
    graph = gm.graph
    kernels: list[str] = []
    replaced: dict = {}  # a group's last node -> the call that now gives its value

    def cur(x):
        return replaced.get(x, x)

    for i, g in enumerate(groups):
        args_in = _group_args(g)
        g.args = args_in if g.render is _render_ew else g.args
        text = g.render(i, g) if g.render else ""
        if not text:
            continue
        out = g.nodes[-1]
        args: list = []
        with graph.inserting_before(g.nodes[0]):
            for x in args_in:
                if isinstance(x, Attr):
                    args.append(graph.get_attr(x.name))
                elif hasattr(x, "op"):
                    args.append(cur(x))
                else:
                    args.append(x)
        with graph.inserting_after(out):
            new = graph.call_function(_placeholder(f"lowered_{i}"), tuple(args))
        out.replace_all_uses_with(new)
        replaced[out] = new
        new.args = tuple(args)
        for n in reversed(g.nodes):
            if not n.users:
                graph.erase_node(n)
        kernels.append(text)
    if not kernels:
        return ""
    graph.eliminate_dead_code()
    graph.lint()
    code = graph.python_code(root_module="self")
    src = code.src
    imports = []
    for name, obj in code.globals.items():
        if name not in src.replace("def forward", ""):
            continue
        if getattr(obj, "_wb_lowered", None):
            src = re.sub(rf"\b{re.escape(name)}\(", f"{obj._wb_lowered}(", src)
        elif name in ("torch", "getattr"):
            continue
        elif name in ("inf", "nan"):
            imports.append(f"from math import {name}")
        elif name == "device":
            imports.append("from torch import device")
        elif hasattr(obj, "__module__") and hasattr(obj, "__qualname__") and "." not in obj.__qualname__:
            imports.append(f"from {obj.__module__} import {obj.__qualname__} as {name}")
        elif isinstance(obj, type(re)):
            imports.append(f"import {obj.__name__} as {name}")
        else:
            raise LoweringError(f"cannot name {name!r} in the generated forward")
    forward = "\n".join("    " + ln if ln.strip() else "" for ln in src.strip("\n").splitlines())
    header = (f'"""Seed for {problem.id}, generated by workbench.search.lowering ({label}): the '
              "reference's graph with\nthe parts a template covers in Triton and the rest in "
              'PyTorch as traced."""\n')
    return (header + "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n"
            + "".join(i + "\n" for i in sorted(set(imports))) + "\n"
            + _reference_source(problem) + "\n\n" + "\n\n".join(kernels)
            + "\n\nclass ModelNew(_Reference):\n" + forward + "\n")


def _placeholder(name: str):
    def f(*args):  # pragma: no cover - replaced by name in the generated source
        raise RuntimeError("placeholder")
    f.__name__ = f.__qualname__ = name
    f._wb_lowered = "_" + name  # type: ignore[attr-defined]  # the launcher's name
    return f


def lower(problem: Problem, families: Sequence[str] = FAMILIES, tf32: bool = False) -> str | None:
    """The source of a candidate with the kinds `families` lowered to Triton, or None when the
    reference does not trace, nothing of those kinds applies, or the traced graph depends on the
    problem's sizes (a constant computed from them, such as a scale or a reshape, is baked into
    a traced graph: the graphs traced at full and at CPU sizes must render the same).
    `tf32`: matmuls may use TF32 (a run whose tolerance admits it)."""
    full = _lower_at(problem, families, tf32, cpu=False)
    if full is None or _lower_at(problem, families, tf32, cpu=True) != full:
        return None
    return full


def _lower_at(problem: Problem, families: Sequence[str], tf32: bool, cpu: bool) -> str | None:
    try:
        gm = _trace(problem, cpu=cpu)
    except Exception:  # noqa: BLE001 - an untraceable reference gets no lowered seed
        return None
    low = Lowerer(gm, families, FAMILY_HANDLERS, tf32=tf32)
    low.run()
    groups = [g for g in low.groups if g.kind != "elementwise" or g.body]
    if not groups:
        return None
    try:
        return _render(problem, gm, groups, "+".join(families)) or None
    except Exception:  # noqa: BLE001 - a graph the renderer cannot express gets no seed
        return None


def lowered_seeds(problem: Problem) -> list[Candidate]:
    """Seeds for `problem` from the family kinds: every kind lowered at once, then each kind
    alone; distinct sources only, in that order."""
    out: list[Candidate] = []
    seen: set[str] = set()
    for fams in (FAMILIES,) + tuple((f,) for f in FAMILIES):
        src = lower(problem, fams)
        if src is None:
            continue
        c = Candidate.from_source(problem.id, src, origin="lowering:" + "+".join(fams))
        if c.id not in seen:
            seen.add(c.id)
            out.append(c)
    return out
