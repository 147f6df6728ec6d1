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
from workbench.search.lowering_ops import arg, dims_of, ew_expr, ew_parts, is_float, is_tensor, literal, op_name, val

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
        body = f"v0 = (x0 - x1) / tl.sqrt(x2 + {literal(mod.eps)})"
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
