"""Seed kernels for a problem nobody wrote zoo kernels for: the reference's graph lowered to Triton.

`lower(problem)` traces the reference's `Model` with `torch.fx` (on the meta device, at full
size, shapes in each node's meta: `workbench.problems.trace.graph`), then replaces the parts a template covers with calls to Triton
kernels rendered from the templates in `lowering_templates`, and keeps every other op in
PyTorch as traced:

- elementwise chains: maximal runs of unary and binary elementwise ops (relu, sigmoid, tanh,
  gelu, silu, elu, hardtanh, clamp, exp, abs, neg, + - * / with a same-shape tensor or a
  number) whose intermediate values are used only inside the run, fused into one kernel;
- row reductions over the last dimension: sum, mean, amax, amin (keepdim either way);
- softmax and log-softmax over the last dimension (rows up to `MAX_ROW` long);
- layer norm over the last dimension (`nn.LayerNorm`, affine or not);
- matmuls (2-D `@`, `torch.mm`, `torch.matmul`) and linear layers (`nn.Linear`) in one tiled
  `tl.dot` kernel, with the elementwise chain that consumes the product fused as its epilogue
  (IEEE fp32 products for fp32 problems, as PyTorch computes them).

Each variant lowers one of these families (all of them, or one family alone), so a problem gets
up to a few seeds, each a self-contained file: the reference class (renamed `_Reference`, so
`ModelNew` has its constructor and parameter names) and a generated `ModelNew.forward`. A
variant that lowers nothing is dropped: a file that only re-runs PyTorch is no seed.
Convolutions, batched matmuls, recurrent layers, scans and broadcasting ops stay in PyTorch.

Only the reference (problem code the user chose to load) is traced; no candidate is run here.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from workbench.records import Candidate, Problem
from workbench.search import lowering_templates as T

#: Longest row the single-block softmax template takes (elements).
MAX_ROW = 16384
FAMILIES = ("elementwise", "matmul", "reduce", "softmax", "norm")


class LoweringError(Exception):
    """The reference cannot be traced or lowered (internal: seeds() returns [] then)."""


@dataclass
class _Group:
    kind: str                 # "ew" | "reduce" | "softmax" | "norm"
    nodes: list               # fx nodes replaced (the last one's value is the group's)
    inputs: list              # fx nodes / get_attr targets read by the kernel
    body: list[str]           # elementwise: kernel lines; others: template args
    extra: dict[str, Any]


_FLOAT = ("torch.float32", "torch.float16", "torch.bfloat16")


def _meta(n):
    """The node's single-tensor metadata from ShapeProp, None for anything else."""
    tm = n.meta.get("tensor_meta") if hasattr(n, "meta") else None
    return tm if hasattr(tm, "dtype") and hasattr(tm, "shape") else None


def _is_float_tensor(n) -> bool:
    tm = _meta(n)
    return tm is not None and str(tm.dtype) in _FLOAT and hasattr(tm, "shape")


def _unary_expr(name: str, a: str, args: tuple, kwargs: dict) -> str | None:
    """Triton (fp32) expression of a unary op on `a`, or None when unsupported."""
    if name == "relu":
        return f"tl.maximum({a}, 0.0)"
    if name == "sigmoid":
        return f"(1.0 / (1.0 + tl.exp(-{a})))"
    if name == "tanh":
        return f"(2.0 / (1.0 + tl.exp(-2.0 * {a})) - 1.0)"
    if name == "gelu" and kwargs.get("approximate", "none") == "none" and len(args) <= 1:
        return f"(0.5 * {a} * (1.0 + tl.erf({a} * 0.7071067811865476)))"
    if name == "silu":
        return f"({a} / (1.0 + tl.exp(-{a})))"
    if name == "exp":
        return f"tl.exp({a})"
    if name == "abs":
        return f"tl.abs({a})"
    if name == "neg":
        return f"(-{a})"
    if name == "elu" and float(kwargs.get("alpha", args[0] if args else 1.0)) == 1.0:
        return f"tl.where({a} > 0.0, {a}, tl.exp({a}) - 1.0)"
    if name in ("hardtanh", "clamp", "clip"):
        lo_default, hi_default = (-1.0, 1.0) if name == "hardtanh" else (None, None)
        lo = kwargs.get("min_val", kwargs.get("min", args[0] if args else lo_default))
        hi = kwargs.get("max_val", kwargs.get("max", args[1] if len(args) > 1 else hi_default))
        if not all(v is None or isinstance(v, (int, float)) for v in (lo, hi)) or (lo is None and hi is None):
            return None
        e = a
        if lo is not None:
            e = f"tl.maximum({e}, {float(lo)!r})"
        if hi is not None:
            e = f"tl.minimum({e}, {float(hi)!r})"
        return e
    return None


_BINARY = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "div": "/"}
_MODULE_UNARY = {"ReLU": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "GELU": "gelu", "SiLU": "silu"}


def _op_name(node, modules) -> str | None:
    if node.op == "call_function":
        return getattr(node.target, "__name__", None)
    if node.op == "call_method":
        return str(node.target)
    if node.op == "call_module":
        mod = modules.get(node.target)
        name = _MODULE_UNARY.get(type(mod).__name__)
        if name == "gelu" and getattr(mod, "approximate", "none") != "none":
            return None
        return name
    return None


def _dim_is_last(dim, ndim: int) -> bool:
    if isinstance(dim, (list, tuple)) and len(dim) == 1:
        dim = dim[0]
    return isinstance(dim, int) and dim in (-1, ndim - 1)


class _Lowerer:
    def __init__(self, gm, families: tuple[str, ...]):
        self.gm, self.families = gm, families
        self.modules = dict(gm.named_modules())
        self.groups: list[_Group] = []
        self.group_of: dict[Any, _Group] = {}

    # ---------------------------------------------------------------- elementwise
    def _ew(self, node) -> bool:
        if "elementwise" not in self.families or not _is_float_tensor(node):
            return False
        name = _op_name(node, self.modules)
        if name is None:
            return False
        shape, dtype = _meta(node).shape, _meta(node).dtype
        tensor_args = [a for a in node.args if hasattr(a, "op")] + \
            [v for v in node.kwargs.values() if hasattr(v, "op")]
        inplace = node.kwargs.get("inplace") or getattr(self.modules.get(node.target), "inplace", False)
        if inplace and any(len(a.users) > 1 for a in tensor_args):
            return False  # the reference overwrites a value that something else reads
        for a in tensor_args:
            tm = _meta(a)
            if tm is None or tm.shape != shape or tm.dtype != dtype or not _is_float_tensor(a):
                return False
        # The group this node joins: the open group of its single-use elementwise producer.
        joined = None
        for a in tensor_args:
            g = self.group_of.get(a)
            if g is not None and g.kind in ("ew", "mm") and g.nodes[-1] is a and len(a.users) == 1:
                joined = g
                break
        g = joined or _Group("ew", [], [], [], {"dtype": dtype})
        operands = []
        for a in node.args if node.op != "call_module" else node.args[:1]:
            if hasattr(a, "op"):
                operands.append(self._ew_operand(g, a))
            elif isinstance(a, (int, float)) and not isinstance(a, bool):
                operands.append(repr(float(a)))
            else:
                operands.append(None)
        if name in _BINARY:
            if len(operands) != 2 or None in operands or node.kwargs:
                return self._undo(g, joined)
            expr = f"({operands[0]} {_BINARY[name]} {operands[1]})"
            if not any(hasattr(a, "op") for a in node.args):
                return self._undo(g, joined)
        else:
            if not operands or operands[0] is None or not hasattr(node.args[0], "op"):
                return self._undo(g, joined)
            rest = tuple(node.args[1:]) if node.op != "call_module" else ()
            kwargs = dict(node.kwargs)
            kwargs.pop("inplace", None)
            expr = _unary_expr(name, operands[0], rest, kwargs)
            if expr is None:
                return self._undo(g, joined)
        g.body.append(f"v{len(g.nodes)} = {expr}")
        g.nodes.append(node)
        if joined is None:
            self.groups.append(g)
        self.group_of[node] = g
        return True

    def _ew_operand(self, g: _Group, a) -> str:
        if a in g.nodes:
            return f"v{g.nodes.index(a)}"
        if a not in g.inputs:
            g.inputs.append(a)
        return f"x{g.inputs.index(a)}"

    @staticmethod
    def _undo(g: _Group, joined) -> bool:
        if joined is None:
            return False
        # Inputs added for the refused node are the last ones and no accepted line reads them.
        used = set(re.findall(r"\bx(\d+)\b", " ".join(g.body)))
        while g.inputs and str(len(g.inputs) - 1) not in used:
            g.inputs.pop()
        return False

    # ---------------------------------------------------------------- rows
    def _row(self, node) -> bool:
        name = _op_name(node, self.modules) if node.op != "call_module" else None
        if not node.args or not hasattr(node.args[0], "op") or not _is_float_tensor(node.args[0]):
            return False
        x = node.args[0]
        shape = _meta(x).shape
        if len(shape) == 0 or _meta(node) is None:
            return False
        n_row = int(shape[-1])
        dim = node.kwargs.get("dim", node.args[1] if len(node.args) > 1 else None)
        if name in ("softmax", "log_softmax", "_softmax") and "softmax" in self.families:
            if node.kwargs.get("dtype") is not None or not _dim_is_last(dim, len(shape)) or n_row > MAX_ROW:
                return False
            self._add("softmax", node, [x], {"log": name == "log_softmax", "dtype": _meta(x).dtype})
            return True
        if name in ("sum", "mean", "amax", "amin") and "reduce" in self.families:
            keepdim = node.kwargs.get("keepdim", node.args[2] if len(node.args) > 2 else False)
            if dim is None or not _dim_is_last(dim, len(shape)) or node.kwargs.get("dtype") is not None \
                    or not isinstance(keepdim, bool) or len(shape) < 1:
                return False
            self._add("reduce", node, [x], {"op": name, "keepdim": keepdim, "dtype": _meta(x).dtype})
            return True
        return False

    def _mm(self, node) -> bool:
        """A matmul (2-D `@` / mm / matmul) or linear layer (nn.Linear, F.linear) in float."""
        if "matmul" not in self.families or not _is_float_tensor(node) or not node.args:
            return False
        x = node.args[0]
        if not hasattr(x, "op") or not _is_float_tensor(x) or _meta(x).dtype != _meta(node).dtype:
            return False
        name = _op_name(node, self.modules) if node.op != "call_module" else None
        mod = self.modules.get(node.target) if node.op == "call_module" else None
        if mod is not None and type(mod).__name__ == "Linear":
            b = f"{node.target}.bias" if mod.bias is not None else None
            extra = {"linear": True, "b": f"{node.target}.weight", "bias": b}
        elif name in ("matmul", "mm") and len(node.args) == 2 and not node.kwargs:
            other = node.args[1]
            if not hasattr(other, "op") or _meta(other) is None or len(_meta(x).shape) != 2 \
                    or len(_meta(other).shape) != 2 or _meta(other).dtype != _meta(x).dtype:
                return False
            extra = {"linear": False, "b": other, "bias": None}
        else:
            return False
        g = _Group("mm", [node], [], [], extra | {"a": x, "dtype": _meta(node).dtype})
        self.groups.append(g)
        self.group_of[node] = g
        return True

    def _norm(self, node) -> bool:
        if "norm" not in self.families or not node.args or not _is_float_tensor(node.args[0]):
            return False
        x = node.args[0]
        shape = _meta(x).shape
        if node.op == "call_module" and type(self.modules.get(node.target)).__name__ == "LayerNorm":
            mod = self.modules[node.target]
            if len(mod.normalized_shape) != 1 or mod.normalized_shape[0] != shape[-1]:
                return False
            w = f"{node.target}.weight" if mod.weight is not None else None
            b = f"{node.target}.bias" if getattr(mod, "bias", None) is not None else None
            self._add("norm", node, [x], {"w": w, "b": b, "eps": float(mod.eps), "dtype": _meta(x).dtype})
            return True
        return False

    def _add(self, kind: str, node, inputs: list, extra: dict) -> None:
        g = _Group(kind, [node], list(inputs), [], extra)
        self.groups.append(g)
        self.group_of[node] = g

    def run(self) -> None:
        for node in list(self.gm.graph.nodes):
            if node.op not in ("call_function", "call_method", "call_module"):
                continue
            self._ew(node) or self._mm(node) or self._row(node) or self._norm(node)


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


def _render(problem: Problem, gm, groups: list[_Group], label: str) -> str:
    import torch.fx as fx

    graph = gm.graph
    kernels: list[str] = []
    replaced: dict = {}  # a group's last node -> the call that now gives its value

    def cur(x):
        return replaced.get(x, x)

    for i, g in enumerate(groups):
        fname = f"_lowered_{i}"
        out = g.nodes[-1]
        args: list = [cur(x) for x in g.inputs]
        if g.kind == "mm":
            ops = []
            with graph.inserting_before(g.nodes[0]):
                for key in ("b", "bias"):
                    v = g.extra[key]
                    ops.append(graph.get_attr(v) if isinstance(v, str) else cur(v))
            args = [cur(g.extra["a"])] + ops + args
        if g.kind == "norm":
            with graph.inserting_before(g.nodes[0]):
                for key in ("w", "b"):
                    args.append(graph.get_attr(g.extra[key]) if g.extra[key] else None)
        with graph.inserting_after(out):
            fn = _placeholder(fname.lstrip("_"))  # its value's name must not shadow the launcher
            new = graph.call_function(fn, tuple(args))
        out.replace_all_uses_with(new)
        replaced[out] = new
        new.args = tuple(args)
        for n in reversed(g.nodes):
            if not n.users:
                graph.erase_node(n)
        kernels.append(T.render(g.kind, i, g))
    graph.eliminate_dead_code()
    graph.lint()
    code = graph.python_code(root_module="self")
    src = code.src
    imports = []
    for name, obj in code.globals.items():
        if name not in src.replace("def forward", ""):
            continue
        if getattr(obj, "_wb_lowered", None):
            src = src.replace(f"{name}(", f"{obj._wb_lowered}(")
        elif name == "torch":
            continue
        elif name in ("inf", "nan"):
            imports.append(f"from math import {name}")
        elif name == "device":
            imports.append("from torch import device")
        elif name == "getattr":
            continue
        elif hasattr(obj, "__module__") and hasattr(obj, "__qualname__") and "." not in obj.__qualname__:
            imports.append(f"from {obj.__module__} import {obj.__qualname__} as {name}")
        elif isinstance(obj, type(fx)):
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


def lower(problem: Problem, families: tuple[str, ...] = FAMILIES) -> str | None:
    """The source of a candidate with `families` lowered to Triton, or None when the reference
    does not trace, nothing of those families applies, or the traced graph depends on the
    problem's sizes (a constant computed from them, such as a scale or a reshape, is baked
    into a traced graph: the graphs traced at full and at CPU sizes must render the same)."""
    full = _lower_at(problem, families, cpu=False)
    if full is None or _lower_at(problem, families, cpu=True) != full:
        return None
    return full


def _lower_at(problem: Problem, families: tuple[str, ...], cpu: bool) -> str | None:
    try:
        gm = _trace(problem, cpu=cpu)
    except Exception:  # noqa: BLE001 - an untraceable reference gets no lowered seed
        return None
    low = _Lowerer(gm, families)
    low.run()
    groups = [g for g in low.groups if g.kind != "ew" or g.body]
    if not groups:
        return None
    try:
        return _render(problem, gm, groups, "+".join(families))
    except Exception:  # noqa: BLE001 - a graph the renderer cannot express gets no seed
        return None


def lowered_seeds(problem: Problem) -> list[Candidate]:
    """Seeds for `problem`: every family lowered at once, then each family alone; distinct
    sources only, in that order."""
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

