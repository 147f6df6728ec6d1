"""The rewrite half of Inductor seeds (`inductor.py` captures): Inductor's output code for a
problem turned into a self-contained KernelBench answer.

`rewrite(problem, code, arg_exprs, outputs, configs)` keeps the reference class (renamed
`_Reference`, so `ModelNew` has its constructor and parameter names), every kernel as a plain
`@triton.jit` function launched by a small launcher with its configuration as literal keywords
(`XBLOCK=1024, num_warps=4, num_stages=1`: the search's mutation operators and `space.py` tune
them), Inductor's runtime helpers replaced by torch calls (`empty_strided`, `as_strided`), library
kernels Inductor chose (cuBLAS / cuDNN through `extern_kernels`, aten fallbacks) as explicit
`torch.*` / `torch.ops.aten.*` calls, the Triton helpers its kernels call written here
(`HELPERS`), and a `ModelNew.forward` that passes the arguments and rebuilds the reference's
output structure. Nothing is imported from `torch._inductor`.

What is refused (RewriteError, so no seed rather than a wrong one): kernel kinds other than
pointwise and (persistent) reductions with 1-3-D grids (templates, scans split across programs,
combo and cooperative kernels), C++ kernels, memory pools, tensor constants, helpers not written
here, an output that is not one of `call`'s results, a module with no Triton kernel at all (a file
that only calls library kernels re-runs PyTorch), and any name the rewritten code would leave
undefined.
"""
from __future__ import annotations

import ast
import re
from typing import Any

from workbench.errors import WorkbenchError
from workbench.records import Problem

#: Inductor kernel decorators this rewrite launches itself.
KERNEL_KINDS = ("pointwise", "reduction", "persistent_reduction")
#: Grid shapes it reproduces (torch._inductor.runtime.triton_heuristics.GridExpr subclasses).
GRID_TYPES = ("Grid1D", "Grid2D", "Grid3D", "Grid2DWithYZOverflow")
MAX_Y_GRID = 65535
_DROP_CALLS = {"assert_size_stride", "assert_alignment", "run_intermediate_hooks", "set_device",
               "check_memory_step", "track_tensor", "start_graph", "end_graph"}
HEADER = """import math
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.language.extra import libdevice

tl_math = tl.math
"""
#: The helpers Inductor's kernels call from torch._inductor.runtime.triton_helpers, written here as
#: `_th_<name>` (importing anything under torch._inductor would import torch._dynamo, which
#: replaces torch functions such as manual_seed: the executor's runtime guard rightly flags that).
HELPERS = {
    "maximum": """@triton.jit
def _th_maximum(a, b):
    # NaN wins, as in torch.maximum
    return tl.where((a > b) | (a != a), a, b)
""",
    "minimum": """@triton.jit
def _th_minimum(a, b):
    return tl.where((a < b) | (a != a), a, b)
""",
    "max2": """@triton.jit
def _th_max2(a, dim):
    return tl.reduce(a, dim, _th_maximum)
""",
    "min2": """@triton.jit
def _th_min2(a, dim):
    return tl.reduce(a, dim, _th_minimum)
""",
    "prod": """@triton.jit
def _th_mul(a, b):
    return a * b


@triton.jit
def _th_prod(a, dim):
    return tl.reduce(a, dim, _th_mul)
""",
    "any": """@triton.jit
def _th_or(a, b):
    return a | b


@triton.jit
def _th_any(a, dim):
    return tl.reduce(a != 0, dim, _th_or)
""",
    "promote_to_tensor": """@triton.jit
def _th_promote_to_tensor(x):
    return x + tl.zeros((1,), tl.int1)
""",
    "exp": """@triton.jit
def _th_exp(x, use_fast_math: tl.constexpr = False):
    return tl.exp(x)
""",
    "welford_reduce": """@triton.jit
def _th_welford_reduce(value, mean, m2, weight, first_iteration):
    # One more element into running (mean, sum of squared deviations, count).
    if first_iteration:
        new_weight = tl.full(weight.shape, 1, weight.dtype)
        new_mean = value
        new_m2 = tl.zeros_like(m2)
    else:
        delta = value - mean
        new_weight = weight + 1
        new_mean = mean + delta / new_weight
        new_m2 = m2 + delta * (value - new_mean)
    return new_mean, new_m2, new_weight
""",
    "welford_combine": """@triton.jit
def _th_welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    share = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return mean_1 + delta * share, m2_1 + m2_2 + delta * delta * weight_1 * share, new_weight
""",
    "welford": """@triton.jit
def _th_welford(mean, m2, weight, dim):
    return tl.reduce((mean, m2, weight), dim, _th_welford_combine)
""",
    "online_softmax_combine": """@triton.jit
def _th_online_softmax_combine(lhs_max, lhs_sum, rhs_max, use_fast_math: tl.constexpr):
    # Running (max, sum of exp(x - max)) with one more element rhs_max.
    out_max = _th_maximum(lhs_max, rhs_max)
    lhs_scale = tl.where(out_max == float("-inf"), 1.0, tl.exp(lhs_max - out_max))
    rhs_scale = tl.where(out_max == float("-inf"), 1.0, tl.exp(rhs_max - out_max))
    return out_max, lhs_sum * lhs_scale + rhs_scale
""",
    "online_softmax_reduce": """@triton.jit
def _th_online_softmax_reduce(lhs_max, lhs_sum, dim, use_fast_math: tl.constexpr):
    out_max = _th_max2(lhs_max, dim)
    keep = tl.expand_dims(out_max, dim)
    delta = tl.where(keep == float("-inf"), 0.0, lhs_max - keep)
    return out_max, tl.sum(lhs_sum * tl.exp(delta), dim)
""",
    "select_one": """@triton.jit
def _th_select_one(x, mask, dim, keep_dims: tl.constexpr = False):
    # The element of x where mask is set (one per slice along dim).
    out = tl.sum(tl.where(mask, x, 0), dim)
    if keep_dims:
        out = tl.expand_dims(out, dim)
    return out
""",
    "div_floor_integer": """@triton.jit
def _th_div_floor_integer(a, b):
    quot = a // b
    rem = a % b
    return tl.where((rem != 0) & ((a < 0) != (b < 0)), quot - 1, quot)
""",
    "remainder_integer": """@triton.jit
def _th_remainder_integer(a, b):
    rem = a % b
    return tl.where((rem != 0) & ((rem < 0) != (b < 0)), rem + b, rem)
""",
}
#: Helpers that call other helpers.
_HELPER_NEEDS = {"max2": ("maximum",), "min2": ("minimum",), "welford": ("welford_combine",),
                 "online_softmax_combine": ("maximum",), "online_softmax_reduce": ("max2", "maximum")}
_HELPER_CALL = re.compile(r"\btriton_helpers\.(\w+)\(")


class RewriteError(WorkbenchError):
    """Inductor's output for a problem cannot be turned into a seed (the message says why)."""


# =========================================================================== rewrite
def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def _dict_entry(d: ast.AST | None, key: str) -> ast.AST | None:
    if not isinstance(d, ast.Dict):
        return None
    for k, v in zip(d.keys, d.values):
        if isinstance(k, ast.Constant) and k.value == key:
            return v
    return None


class _Kernel:
    """One `async_compile.triton(name, source)` of the output code."""

    def __init__(self, name: str, src: str):
        self.name = name
        tree = ast.parse(src)
        self.helpers: list[str] = []
        self.fn: ast.FunctionDef | None = None
        self.kind = ""
        self.meta: dict[str, ast.AST | None] = {}
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            body = _function_text(src, node)
            if node.name == name:
                self.fn = node
                self.text = body
                for dec in node.decorator_list:
                    if isinstance(dec, ast.Call) and _dotted(dec.func).startswith("triton_heuristics."):
                        self.kind = _dotted(dec.func).split(".")[-1]
                        self.meta = {k.arg: k.value for k in dec.keywords if k.arg}
            else:
                self.helpers.append(body)
        if self.fn is None:
            raise RewriteError(f"kernel {name}: its source defines no function of that name")
        if self.kind not in KERNEL_KINDS:
            raise RewriteError(f"kernel {name}: Inductor kind {self.kind or 'unknown'!r} is not launched by this "
                               f"rewrite (only {', '.join(KERNEL_KINDS)})")
        sig = _literal(_dict_entry(self.meta.get("triton_meta"), "signature"))
        if not isinstance(sig, dict):
            raise RewriteError(f"kernel {name}: no signature in its triton_meta")
        self.signature: dict[str, str] = sig
        self.constants = _literal(_dict_entry(self.meta.get("triton_meta"), "constants")) or {}
        self.grid_type = _literal(_dict_entry(self.meta.get("inductor_meta"), "grid_type")) or "Grid1D"
        if self.grid_type not in GRID_TYPES:
            raise RewriteError(f"kernel {name}: grid {self.grid_type} is not reproduced (only {', '.join(GRID_TYPES)})")
        params = [a.arg for a in self.fn.args.args]
        self.params = params
        # `run` passes every parameter but the launch-configured constexprs; a constexpr Inductor
        # fixed (`constants`, e.g. xnumel=1) is passed too, positionally.
        self.constexprs = [p for p in params if self.signature.get(p) == "constexpr" and p not in self.constants]
        self.runtime = [p for p in params if p not in self.constexprs]


#: libdevice functions with a `tl.math` equivalent (the same libdevice call on a GPU; the Triton
#: interpreter runs only the `tl.math` form).
_TL_MATH = ("abs", "ceil", "cos", "erf", "exp", "exp2", "floor", "fma", "log", "log2", "rsqrt", "sin", "sqrt")
_LIBDEVICE = re.compile(r"\blibdevice\.(" + "|".join(_TL_MATH) + r")\(")


def _function_text(src: str, node: ast.FunctionDef) -> str:
    """A function's source without its decorators, re-decorated `@triton.jit`, with Inductor's
    helpers called as the `_th_` functions written here (RewriteError for one not written)."""
    lines = src.splitlines()
    text = "\n".join(lines[node.lineno - 1: node.end_lineno])
    missing = sorted({m for m in _HELPER_CALL.findall(text) if m not in HELPERS})
    if missing:
        raise RewriteError(f"kernel {node.name} calls Inductor helpers with no equivalent here: {', '.join(missing)}")
    text = _HELPER_CALL.sub(lambda m: f"_th_{m.group(1)}(", text)
    if "triton_helpers" in text:
        raise RewriteError(f"kernel {node.name} uses triton_helpers other than by calls")
    return "@triton.jit\n" + _LIBDEVICE.sub(r"tl.math.\1(", text)


def _helpers_for(texts: list[str]) -> list[str]:
    """The `_th_` helper definitions the kernel texts call, dependencies first."""
    used = {m for t in texts for m in re.findall(r"\b_th_(\w+)\(", t) if m in HELPERS}
    order: list[str] = []

    def add(name: str) -> None:
        for dep in _HELPER_NEEDS.get(name, ()):
            add(dep)
        if name not in order:
            order.append(name)

    for name in sorted(used):
        add(name)
    return [HELPERS[n] for n in order]


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _grid(k: _Kernel) -> str:
    """The grid lambda of a kernel's launcher (numels are the launcher's parameters)."""

    def cdiv(axis: str) -> str:
        numel, block = f"{axis}numel", f"{axis.upper()}BLOCK"
        if numel not in k.runtime and numel not in k.constants:
            return "1"
        n = numel if numel in k.runtime else repr(k.constants[numel])
        return f"triton.cdiv({n}, meta[{block!r}])" if block in k.constexprs else n

    if k.grid_type == "Grid1D":
        return f"lambda meta: ({cdiv('x')},)"
    if k.grid_type == "Grid2D":
        return f"lambda meta: ({cdiv('x')}, {cdiv('y')})"
    if k.grid_type == "Grid3D":
        return f"lambda meta: ({cdiv('x')}, {cdiv('y')}, {cdiv('z')})"
    # Grid2DWithYZOverflow: the y blocks are spread over grid axes 1 and 2 (CUDA caps axis 1).
    return (f"lambda meta: ({cdiv('x')}, triton.cdiv({cdiv('y')}, triton.cdiv({cdiv('y')}, {MAX_Y_GRID})), "
            f"triton.cdiv({cdiv('y')}, {MAX_Y_GRID}))")


def _launcher(k: _Kernel, config: dict[str, Any] | None) -> str:
    """`_launch_<kernel>(<runtime args>)`: the kernel launched with literal configuration."""
    cfg = dict((config or {}).get("kwargs") or {})
    kw = []
    for p in k.constexprs:
        if k.kind == "persistent_reduction" and p.startswith("R") and p.endswith("_BLOCK"):
            # A persistent reduction holds a whole row: its block follows the row length.
            axis = p[:-len("_BLOCK")].lower()
            kw.append(f"{p}=triton.next_power_of_2({axis}_numel)")
        elif p in cfg:
            kw.append(f"{p}={int(cfg[p])}")
        elif p in k.constants:
            kw.append(f"{p}={k.constants[p]!r}")
        elif p.endswith("BLOCK"):
            kw.append(f"{p}={_default_block(k, p)}")
        else:
            raise RewriteError(f"kernel {k.name}: no value for its compile-time parameter {p}")
    warps = int((config or {}).get("num_warps") or (4 if k.kind == "pointwise" else 8))
    stages = int((config or {}).get("num_stages") or 1)
    kw += [f"num_warps={warps}", f"num_stages={stages}"]
    args = ", ".join(k.runtime)
    return (f"def _launch_{k.name}({args}):\n"
            f"    grid = {_grid(k)}\n"
            f"    {k.name}[grid]({args}, {', '.join(kw)})\n")


def _default_block(k: _Kernel, p: str) -> int:
    if p.startswith("R"):
        return 128 if k.kind == "reduction" else 1
    return 1024 if k.kind == "pointwise" and p == "XBLOCK" else (1 if k.kind == "reduction" else 64)


class _CallRewriter(ast.NodeTransformer):
    """Inductor's `call(args)` body with its runtime helpers replaced (see module doc)."""

    def __init__(self, kernels: dict[str, _Kernel]):
        self.kernels = kernels
        self.launched: list[str] = []

    def _drop(self, stmt: ast.stmt) -> bool:
        if isinstance(stmt, ast.Delete):
            return True
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            f = stmt.value.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in _DROP_CALLS or (name == "clear" and _dotted(f) == "args.clear"):
                return True
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            if _dotted(stmt.value.func) in ("get_raw_stream", "torch.cuda.current_stream"):
                return True
        return False

    def body(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in stmts:
            if self._drop(s):
                continue
            if isinstance(s, ast.With) and all("DeviceGuard" in _dotted(i.context_expr.func)
                                               for i in s.items if isinstance(i.context_expr, ast.Call)):
                out += self.body(s.body)
                continue
            for field in ("body", "orelse"):
                if hasattr(s, field) and isinstance(getattr(s, field), list) and not isinstance(s, ast.FunctionDef):
                    setattr(s, field, self.body(getattr(s, field)))
            out.append(self.visit(s))
        return out or [ast.Pass()]

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = _dotted(node.func)
        if name in ("empty_strided_cuda", "empty_strided_cpu", "empty_strided_xpu", "empty_strided"):
            if len(node.args) != 3:
                raise RewriteError(f"{name} with {len(node.args)} arguments")
            return ast.Call(func=_attr("torch.empty_strided"), args=node.args[:2],
                            keywords=[ast.keyword("dtype", node.args[2]),
                                      ast.keyword("device", ast.Name("_device", ast.Load()))])
        if name == "reinterpret_tensor":
            return ast.Call(func=_attr("torch.as_strided"), args=node.args, keywords=node.keywords)
        if name.startswith("extern_kernels."):
            op = name.split(".", 1)[1]
            import torch

            target = f"torch.{op}" if hasattr(torch, op) else f"torch.ops.aten.{op}"
            if not hasattr(torch, op) and not hasattr(torch.ops.aten, op):
                raise RewriteError(f"library kernel extern_kernels.{op} has no torch or aten equivalent")
            return ast.Call(func=_attr(target), args=node.args, keywords=node.keywords)
        m = re.fullmatch(r"(?:torch\.ops\.)?aten\.(\w+)(?:\.\w+)?", name)
        if m:
            return ast.Call(func=_attr(f"torch.ops.aten.{m.group(1)}"), args=node.args, keywords=node.keywords)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "run" and isinstance(node.func.value, ast.Name) \
                and node.func.value.id in self.kernels:
            k = self.kernels[node.func.value.id]
            if len(node.args) != len(k.runtime):
                raise RewriteError(f"kernel {k.name} is run with {len(node.args)} arguments, its signature "
                                   f"takes {len(k.runtime)}")
            self.launched.append(k.name)
            return ast.Call(func=ast.Name(f"_launch_{k.name}", ast.Load()), args=node.args, keywords=[])
        return node


def _attr(dotted: str) -> ast.expr:
    parts = dotted.split(".")
    node: ast.expr = ast.Name(parts[0], ast.Load())
    for p in parts[1:]:
        node = ast.Attribute(node, p, ast.Load())
    return node


def _call_function(tree: ast.Module) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "call":
            return node
        if isinstance(node, ast.ClassDef) and node.name == "Runner":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "call":
                    return item
    raise RewriteError("the output code has no call() entry")


def _kernels(tree: ast.Module) -> dict[str, _Kernel]:
    out: dict[str, _Kernel] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        fn = _dotted(node.value.func)
        if not fn.startswith("async_compile."):
            continue
        if fn != "async_compile.triton":
            raise RewriteError(f"the output code compiles a {fn.split('.')[-1]} kernel; only Triton kernels "
                               "are rewritten")
        args = node.value.args
        if len(args) < 2 or not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args[:2]):
            raise RewriteError("async_compile.triton without a literal name and source")
        out[args[0].value] = _Kernel(args[0].value, args[1].value)
    return out


def _names_defined(fn: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in fn.args.args}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _forward_signature(problem_source: str) -> tuple[str, list[str]]:
    """The reference's `forward` parameters (text, without annotations) and their names."""
    tree = ast.parse(problem_source)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "forward":
                    args = item.args
                    for a in args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                        if a is not None:
                            a.annotation = None
                    names = [a.arg for a in args.args[1:]]
                    return ast.unparse(args), names
    raise RewriteError("the reference has no Model.forward")


def _output_expr(template: Any) -> str:
    """The expression rebuilding the reference's output from `outs` (see capture)."""
    if isinstance(template, int):
        return f"outs[{template}]"
    if isinstance(template, dict) and "const" in template:
        return repr(template["const"])
    inner = ", ".join(_output_expr(t) for t in template)
    return f"({inner},)" if len(template) == 1 else f"({inner})"


def rewrite(problem: Problem, code: str, arg_exprs: list[str], outputs: Any,
            configs: dict[str, dict[str, Any]] | None = None) -> str:
    """The candidate source for Inductor's output `code` of `problem` (see the module doc).

    `arg_exprs`: one Python expression per `call` argument, in the forward's scope (`self.fc.weight`,
    `x`, `x.size(0)`); `outputs`: the reference's output structure with each tensor replaced by its
    index in `call`'s results (an int, or nested lists); `configs`: kernel name -> {"kwargs",
    "num_warps", "num_stages"} picked by Inductor's autotuner (missing: a default per kind).
    Raises RewriteError when a part cannot be expressed (module doc)."""
    from workbench.search.lowering import _reference_source

    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        raise RewriteError(f"the output code does not parse: {e}") from e
    kernels = _kernels(tree)
    if not kernels:
        raise RewriteError("Inductor generated no Triton kernel (only library calls): that re-runs PyTorch")
    call = _call_function(tree)
    unpack = next((s for s in call.body if isinstance(s, ast.Assign) and isinstance(s.value, ast.Name)
                   and s.value.id == "args"), None)
    if unpack is None:
        raise RewriteError("call() does not unpack its arguments")
    target = unpack.targets[0]
    names = [e.id for e in target.elts] if isinstance(target, ast.Tuple) else [target.id]  # type: ignore[union-attr]
    if len(names) != len(arg_exprs):
        raise RewriteError(f"call() takes {len(names)} arguments, {len(arg_exprs)} were described")
    rw = _CallRewriter(kernels)
    body = rw.body(list(call.body))
    new_call = ast.FunctionDef(name="call", args=ast.arguments(posonlyargs=[], args=[ast.arg("args")], kwonlyargs=[],
                                                               kw_defaults=[], defaults=[]),
                               body=body, decorator_list=[], returns=None, type_params=[])
    ast.fix_missing_locations(new_call)
    # The device every buffer is allocated on: that of the first tensor argument.
    tensor_args = [n for n, e in zip(names, arg_exprs) if not re.search(r"\.(size|stride|storage_offset)\(", e)]
    if not tensor_args:
        raise RewriteError("call() takes no tensor")
    call_text = ast.unparse(new_call)
    lines = call_text.splitlines()
    at = 1 + next(i for i, ln in enumerate(lines[1:]) if "= args" in ln)
    lines.insert(at + 1, f"    _device = {tensor_args[0]}.device")
    call_text = "\n".join(lines)
    used = {n.id for n in ast.walk(ast.parse(call_text)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    known = _names_defined(ast.parse(call_text).body[0]) | {"torch", "triton", "math", "inf", "nan", "max", "min",
                                                            "int", "float", "abs", "len", "range", "tuple", "list"}
    known |= {f"_launch_{k}" for k in kernels}
    missing = sorted(used - known)
    if missing:
        raise RewriteError(f"call() uses names with no equivalent outside Inductor: {', '.join(missing)}")
    unused = sorted(set(kernels) - set(rw.launched))
    for k in unused:
        kernels.pop(k)
    helpers: list[str] = []
    for k in kernels.values():
        for h in k.helpers:
            if h not in helpers:
                helpers.append(h)
    params, fwd_names = _forward_signature(problem.source)
    forward = (f"    def forward({params}):\n"
               f"        outs = call([{', '.join(arg_exprs)}])\n"
               f"        return {_output_expr(outputs)}\n")
    doc = (f'"""Seed for {problem.id} from PyTorch Inductor (torch.compile, default mode, dynamic shapes):\n'
           "its generated Triton kernels launched with the configuration its autotuner picked, and its\n"
           'call() with the runtime helpers written as torch calls."""\n')
    parts = [doc + HEADER, _reference_source(problem)]
    parts += _helpers_for(helpers + [k.text for k in kernels.values()])
    parts += helpers
    parts += [k.text for k in kernels.values()]
    parts += [_launcher(k, (configs or {}).get(k.name)) for k in kernels.values()]
    parts += [call_text, "class ModelNew(_Reference):\n" + forward]
    src = "\n\n\n".join(p.strip("\n") for p in parts) + "\n"
    try:
        ast.parse(src)
    except SyntaxError as e:
        raise RewriteError(f"the rewritten file does not parse: {e}") from e
    return src
