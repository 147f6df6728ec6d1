"""Seeds from PyTorch Inductor: torch.compile's generated Triton for a problem's reference,
rewritten into a self-contained KernelBench answer (`ModelNew`).

Two halves:

- `capture(problem)` (needs a CUDA GPU) compiles the reference with `torch.compile` (default
  mode, dynamic shapes, duck sizing off, parameter shapes dynamic too, so the generated code
  reads every size from its arguments and runs at any size the problem is checked at),
  records Inductor's output code (one module with a `call(args)` entry, its Triton kernels and
  any library calls), what each `call` argument is (a parameter, a buffer, an input or a size
  of one), the launch configuration Inductor's autotuner picked for each kernel, and which of
  `call`'s results is which output of the reference. It runs the reference's own code (the
  problem, never a candidate) in the calling process: use `python -m workbench.seeds.inductor`
  (a subprocess) from anything that must not hold a CUDA context.
- `rewrite(...)` (pure text, runs anywhere) turns that into a candidate file: the reference
  class renamed `_Reference` (so `ModelNew` has its constructor and parameter names), every
  kernel as a plain `@triton.jit` function launched by a small launcher with its configuration
  as literal keywords (`XBLOCK=1024, num_warps=4, num_stages=1`: the search's mutation
  operators and `space.py` tune them), Inductor's runtime helpers replaced by torch calls
  (`empty_strided`, `as_strided`), library kernels Inductor chose (cuBLAS / cuDNN through
  `extern_kernels`, aten fallbacks) as explicit `torch.*` / `torch.ops.aten.*` calls, and a
  `ModelNew.forward` that passes the arguments and rebuilds the reference's output structure.

What is refused (RewriteError, so no seed rather than a wrong one): kernel kinds other than
pointwise and (persistent) reductions with 1-3-D grids (templates, scans split across programs,
combo and cooperative kernels), C++ kernels, memory pools, tensor constants, an argument whose
origin has no Python expression, an output that is not one of `call`'s results, a module with
no Triton kernel at all (a file that only calls library kernels re-runs PyTorch), and any name
the rewritten code would leave undefined.

    python -m workbench.seeds.inductor PROBLEMS_JSONL OUT_JSONL [--baselines] [--gpu-lock PATH]

reads one `Problem.to_dict()` per line and writes one result per line as it goes (keys:
problem_id, ok, error, source, max_rel_err (full size), max_rel_err_small (CPU sizes), compile_s
and, with --baselines, `baseline`: eager_ms / compiled_ms / compile_speedup of torch.compile in
default mode with static shapes, no CUDA graphs, timed in this process).
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError
from workbench.records import Problem

#: Inductor kernel decorators this rewrite launches itself.
KERNEL_KINDS = ("pointwise", "reduction", "persistent_reduction")
#: Grid shapes it reproduces (torch._inductor.runtime.triton_heuristics.GridExpr subclasses).
GRID_TYPES = ("Grid1D", "Grid2D", "Grid3D", "Grid2DWithYZOverflow")
MAX_Y_GRID = 65535
#: Largest difference from the reference (relative to the output's scale) a validated seed may show.
VALIDATE_TOL = 1e-3
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


# =========================================================================== capture
def _flat_template(out: Any, tensors: list) -> Any:
    """The structure of `out` with each tensor replaced by its index in `tensors` (appended)."""
    import torch

    if isinstance(out, torch.Tensor):
        tensors.append(out)
        return len(tensors) - 1
    if isinstance(out, (tuple, list)):
        return [_flat_template(o, tensors) for o in out]
    if out is None or isinstance(out, (int, float, bool)):
        return {"const": out}
    raise RewriteError(f"the reference returns a {type(out).__name__}")


def _match_outputs(template: Any, wanted: list, got: list) -> Any:
    """Replace each wanted-tensor index in `template` by the index of the equal result in `got`."""
    import torch

    mapping = {}
    taken: set[int] = set()
    for i, w in enumerate(wanted):
        hit = None
        for j, g in enumerate(got):
            if j in taken or not isinstance(g, torch.Tensor) or g.shape != w.shape or g.dtype != w.dtype:
                continue
            if torch.allclose(g.float(), w.float(), rtol=1e-3, atol=1e-3, equal_nan=True):
                hit = j
                break
        if hit is None:
            raise RewriteError(f"output {i} of the reference is not among call()'s results")
        taken.add(hit)
        mapping[i] = hit

    def sub(t):
        if isinstance(t, int):
            return mapping[t]
        if isinstance(t, dict):
            return t
        return [sub(x) for x in t]

    return sub(template)


def _configs(code: str) -> dict[str, dict[str, Any]]:
    """The configuration Inductor's autotuner picked for each kernel of the loaded module of `code`."""
    from torch._inductor.codecache import PyCodeCache

    out: dict[str, dict[str, Any]] = {}
    for mod in reversed(list(PyCodeCache.modules)):
        try:
            text = Path(mod.__file__).read_text()
        except (OSError, TypeError, AttributeError):
            continue
        if text != code:
            continue
        for name, obj in vars(mod).items():
            launchers = getattr(obj, "launchers", None)
            if name.startswith("triton_") and launchers:
                cfg = launchers[0].config
                out[name] = {"kwargs": {k: int(v) for k, v in cfg.kwargs.items() if isinstance(v, int)},
                             "num_warps": int(cfg.num_warps), "num_stages": int(cfg.num_stages)}
        return out | {"__module__": {"call": mod.call}}  # type: ignore[dict-item]
    return out


def _state_expr(name: str) -> str:
    """`self.<path>` for a parameter or buffer name (`seq.0.weight` -> getattr(self.seq, '0').weight)."""
    expr = "self"
    for part in name.split("."):
        expr = f"{expr}.{part}" if part.isidentifier() else f"getattr({expr}, {part!r})"
    return expr


def _flat_source_expr(name: str, state: list[str], params: list[str]) -> str:
    """The expression of a graph input of the flat function (`L['flat_args'][i]`, `L['flat_args'][i].size()[k]`)."""
    m = re.fullmatch(r"L\['flat_args'\]\[(\d+)\](.*)", name)
    if not m:
        raise RewriteError(f"argument {name!r} is not one of the compiled function's inputs")
    i, rest = int(m.group(1)), m.group(2)
    if i < len(state):
        base = _state_expr(state[i])
    elif i - len(state) < len(params):
        base = params[i - len(state)]
    else:
        raise RewriteError(f"argument {name!r} is past the forward's parameters")
    expr = base + re.sub(r"\.(size|stride)\(\)\[(\d+)\]", r".\1(\2)", rest)
    try:
        ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise RewriteError(f"argument {name!r} has no Python expression") from e
    return expr


def _static_dims(node) -> Any:
    """For a graph input: per dimension the size Inductor fixed (None: symbolic); for a size input
    its fixed value or None."""
    import torch
    from torch.fx.experimental.symbolic_shapes import is_concrete_int

    ev = node.meta.get("example_value")
    if isinstance(ev, torch.Tensor):
        return [int(d) if is_concrete_int(d) else None for d in ev.shape]
    if isinstance(ev, (int, torch.SymInt)):
        return int(ev) if is_concrete_int(ev) else None
    return None


def _check_generic(problem: Problem, arg_exprs: list[str], static: list[Any], state: list[str]) -> None:
    """RewriteError when a size Inductor fixed differs at the problem's CPU sizes (the seed would
    then compute the wrong thing, or run out of bounds, at any other size)."""
    import torch

    from workbench.problems import load_source

    small = load_source(problem.source, name=problem.id, cpu=True)
    with torch.device("meta"):
        model = small.Model(*small.get_init_inputs())
        inputs = small.get_inputs()
    inputs = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in inputs]
    scope: dict[str, Any] = {"self": model.to("meta"), "getattr": getattr}
    _, names = _forward_signature(problem.source)
    scope.update(zip(names, inputs))
    for expr, fixed in zip(arg_exprs, static):
        if fixed is None or fixed == [None] * (len(fixed) if isinstance(fixed, list) else 0):
            continue
        try:
            value = eval(expr, {"__builtins__": {}}, scope)  # noqa: S307 - our own expression over the reference
        except Exception as e:  # noqa: BLE001
            raise RewriteError(f"cannot evaluate {expr} at the CPU sizes: {e}") from e
        now = list(value.shape) if isinstance(value, torch.Tensor) else int(value)
        if isinstance(fixed, list):
            bad = [k for k, v in enumerate(fixed) if v is not None and (k >= len(now) or now[k] != v)]
            if bad:
                raise RewriteError(f"Inductor fixed {expr}'s size {[fixed[k] for k in bad]} (dims {bad}), "
                                   f"which is {[now[k] for k in bad if k < len(now)]} at the CPU sizes: the code "
                                   "is not size-generic")
        elif now != fixed:
            raise RewriteError(f"Inductor fixed {expr} to {fixed}, which is {now} at the CPU sizes")


def capture(problem: Problem, device: str = "cuda") -> dict[str, Any]:
    """Compile the reference and return {"code", "arg_exprs", "outputs", "configs", "compile_s"}
    (see the module doc); RewriteError when Inductor's output cannot be described.

    What is compiled is the reference's forward as a function of its parameters, buffers and
    inputs (`torch.func.functional_call`): every tensor is then an input of the graph, so no
    size of a parameter is fixed in the code as it would be for a module's own attributes."""
    import torch
    import torch._dynamo
    from torch._inductor.compile_fx import compile_fx
    from torch._inductor.utils import run_and_get_code

    from workbench.problems import load_source

    lp = load_source(problem.source, name=problem.id)
    torch.manual_seed(0)
    model = lp.Model(*lp.get_init_inputs()).to(device).eval()
    torch.manual_seed(1)
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in lp.get_inputs()]
    with torch.no_grad():
        want = model(*inputs)
    wanted: list = []
    template = _flat_template(want, wanted)
    state = [n for n, _ in model.named_parameters()] + [n for n, _ in model.named_buffers()]
    flat = [t.detach() for _, t in model.named_parameters()] + [t.detach() for _, t in model.named_buffers()]
    _, params = _forward_signature(problem.source)
    if len(inputs) > len(params):
        raise RewriteError("the reference's forward takes fewer named parameters than get_inputs() gives")
    n_state = len(state)

    def flat_forward(*flat_args):
        return torch.func.functional_call(model, dict(zip(state, flat_args[:n_state])), tuple(flat_args[n_state:]))

    record: dict[str, Any] = {}

    def backend(gm, example_inputs):
        sources, static = [], []
        for node in gm.graph.nodes:
            if node.op == "placeholder":
                ga = node.meta.get("grapharg")
                name = ga.source.name if ga is not None and ga.source is not None else None
                sources.append(name() if callable(name) else name)  # a method before torch 2.10
                static.append(_static_dims(node))
        record["sources"], record["static"] = sources, static
        record["examples"] = list(example_inputs)
        return compile_fx(gm, example_inputs)

    patches = [(torch._dynamo.config, "force_parameter_static_shapes", False),
               (torch._dynamo.config, "force_nn_module_property_static_shapes", False),
               (torch._dynamo.config, "specialize_float", True)]
    try:
        import torch.fx.experimental._config as fx_config

        patches.append((fx_config, "use_duck_shape", False))
    except ImportError:  # pragma: no cover - older torch
        pass
    saved = [(obj, k, getattr(obj, k)) for obj, k, _ in patches if hasattr(obj, k)]
    for obj, k, v in patches:
        if hasattr(obj, k):
            setattr(obj, k, v)
    # Dynamo looks classes up by their module: the problem's, executed from text, is registered
    # for the compile only.
    mod_name = lp.module.__name__
    sys.modules[mod_name] = lp.module
    t0 = time.time()
    try:
        compiled = torch.compile(flat_forward, backend=backend, dynamic=True, fullgraph=True)
        with torch.no_grad():
            _, codes = run_and_get_code(compiled, *flat, *inputs)
    except Exception as e:  # noqa: BLE001 - a reference Inductor cannot compile gets no Inductor seed
        raise RewriteError(f"torch.compile failed: {type(e).__name__}: {str(e)[:500]}") from e
    finally:
        sys.modules.pop(mod_name, None)
        for obj, k, v in saved:
            setattr(obj, k, v)
    compile_s = time.time() - t0
    if len(codes) != 1 or "sources" not in record:
        raise RewriteError(f"Inductor produced {len(codes)} output modules (one graph expected)")
    code = codes[0]
    if any(s is None for s in record["sources"]):
        raise RewriteError("a graph input has no source")
    arg_exprs = [_flat_source_expr(s, state, params) for s in record["sources"]]
    _check_generic(problem, arg_exprs, record["static"], state)
    configs = _configs(code)
    loaded = configs.pop("__module__", None)
    if loaded is None:
        raise RewriteError("the compiled module was not found in Inductor's code cache")
    args = [int(a) if not isinstance(a, torch.Tensor) else a for a in record["examples"]]
    with torch.no_grad():
        got = list(loaded["call"](list(args)))
    outputs = _match_outputs(template, wanted, got)
    return {"code": code, "arg_exprs": arg_exprs, "outputs": outputs, "configs": configs,
            "compile_s": round(compile_s, 3), "torch_version": torch.__version__}


def validate(problem: Problem, source: str, device: str = "cuda", small: bool = False) -> float:
    """Largest difference between the seed's and the reference's outputs at full size (`small`:
    at the problem's CPU sizes, a second shape), relative to 1 + the output's largest magnitude;
    the problem's own code and a seed written here are run in this process."""
    import tempfile

    import torch

    from workbench.execution.worker import _import_candidate, copy_state
    from workbench.problems import load_source
    from workbench.records import candidate_id

    lp = load_source(problem.source, name=problem.id, cpu=small)
    torch.manual_seed(0)
    ref = lp.Model(*lp.get_init_inputs()).to(device).eval()
    with tempfile.TemporaryDirectory(prefix="wb_inductor_seed_") as tmp:  # Triton reads kernels from a file
        mod = _import_candidate(source, Path(tmp), candidate_id(source))
        new = mod.ModelNew(*lp.get_init_inputs())
        copy_state(ref, new)
        new = new.to(device).eval()
        torch.manual_seed(2)
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in lp.get_inputs()]
        with torch.no_grad():
            a, b = ref(*inputs), new(*inputs)
    wa: list = []
    wb: list = []
    _flat_template(a, wa)
    _flat_template(b, wb)
    if len(wa) != len(wb):
        return float("inf")
    err = 0.0
    for x, y in zip(wa, wb):
        if x.shape != y.shape:
            return float("inf")
        if x.numel():
            scale = 1.0 + float(x.float().abs().max())
            err = max(err, float((x.float() - y.float()).abs().max()) / scale)
    return err


def seed_for(problem: Problem, device: str = "cuda") -> dict[str, Any]:
    """capture + rewrite + validate one problem: {"problem_id", "ok", "source" | "error", ...}."""
    out: dict[str, Any] = {"problem_id": problem.id}
    try:
        cap = capture(problem, device)
        out["capture"] = {k: cap[k] for k in ("code", "arg_exprs", "outputs", "configs", "torch_version")}
        out["compile_s"] = cap["compile_s"]
        src = rewrite(problem, cap["code"], cap["arg_exprs"], cap["outputs"], cap["configs"])
        out["source"] = src
        out["max_rel_err"] = validate(problem, src, device)
        out["max_rel_err_small"] = validate(problem, src, device, small=True)
    except RewriteError as e:
        return out | {"ok": False, "error": str(e)[:1000]}
    except Exception as e:  # noqa: BLE001 - one problem's failure is its result
        return out | {"ok": False, "error": f"{type(e).__name__}: {str(e)[:1000]}"}
    worst = max(out["max_rel_err"], out["max_rel_err_small"])
    if not worst <= VALIDATE_TOL:
        return out | {"ok": False, "error": f"the rewritten seed differs from the reference by {worst:.3g} (relative)"}
    return out | {"ok": True}


def seed_on_gpu(problem: Problem, gpu: int, timeout_s: float = 600.0) -> dict[str, Any]:
    """`seed_for(problem)` in a subprocess on local GPU `gpu` (the caller holds no CUDA context):
    the row `main` writes ({"ok", "source" | "error", ...})."""
    import os
    import subprocess
    import tempfile

    root = str(Path(__file__).resolve().parents[2])
    with tempfile.TemporaryDirectory(prefix="wb-inductor-seed-") as tmp:
        todo, out = Path(tmp) / "problem.jsonl", Path(tmp) / "seed.jsonl"
        todo.write_text(json.dumps(problem.to_dict()) + "\n")
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu),
                   PYTHONPATH=root + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
        try:
            proc = subprocess.run([sys.executable, "-m", "workbench.seeds.inductor", str(todo), str(out)], env=env,
                                  capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return {"problem_id": problem.id, "ok": False, "error": f"no Inductor seed within {timeout_s:.0f} s"}
        rows = [json.loads(ln) for ln in out.read_text().splitlines() if ln.strip()] if out.exists() else []
    if not rows:
        return {"problem_id": problem.id, "ok": False,
                "error": f"the Inductor process ended without a result (exit {proc.returncode}): {proc.stderr[-300:]}"}
    return rows[-1]


def baseline(problem: Problem, mode: str = "default", lock_path: str | None = None) -> dict[str, Any]:
    """The reference timed eager and under torch.compile (`mode`, static shapes, no CUDA graphs in
    the default mode) in this process, interleaved on the same inputs (ratio of medians), L2
    flushed; with `lock_path` (an executor's GPU lock) the timed region holds the GPU alone and
    the compile shares it."""
    import torch

    from workbench.execution.gpu_lock import GpuLock
    from workbench.execution.timing import L2Flusher, time_cuda_pair
    from workbench.problems import load_source

    lock = GpuLock(lock_path)
    lp = load_source(problem.source, name=problem.id)
    with lock.shared():
        torch.manual_seed(0)
        model = lp.Model(*lp.get_init_inputs()).cuda().eval()
        sets = []
        for k in range(3):
            torch.manual_seed(9000 + k)
            sets.append([x.cuda() if isinstance(x, torch.Tensor) else x for x in lp.get_inputs()])
        compiled = torch.compile(model, mode=mode)
        t0 = time.time()
        with torch.no_grad():
            compiled(*sets[0])
        torch.cuda.synchronize()
        compile_s = time.time() - t0
        flush = L2Flusher(torch.device("cuda"))

    def call(m):
        def fn(inputs):
            with torch.no_grad():
                return m(*inputs)
        return fn

    with lock.exclusive():
        eager, comp = time_cuda_pair(call(model), call(compiled), sets, flush=flush)
    return {"mode": mode, "eager_ms": eager.median_ms, "compiled_ms": comp.median_ms,
            "compile_speedup": eager.median_ms / comp.median_ms, "compile_s": round(compile_s, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("problems_jsonl")
    ap.add_argument("out_jsonl")
    ap.add_argument("--baselines", action="store_true",
                    help="also time the reference eager and under torch.compile (default mode, static shapes)")
    ap.add_argument("--gpu-lock", default=None, help="an executor's GPU lock file: time alone, compile shared")
    ap.add_argument("--skip", default="", help="comma-separated problem ids not to do (a previous run died on them)")
    args = ap.parse_args(argv)
    from workbench.execution.gpu_lock import GpuLock

    skip = set(filter(None, args.skip.split(",")))
    problems = [Problem.from_dict(json.loads(ln)) for ln in Path(args.problems_jsonl).read_text().splitlines()
                if ln.strip()]
    lock = GpuLock(args.gpu_lock)
    with open(args.out_jsonl, "a") as f:
        for p in problems:
            if p.id in skip:
                continue
            print(f"inductor: {p.id} ...", file=sys.stderr, flush=True)
            import torch._dynamo

            torch._dynamo.reset()
            with lock.shared():
                row = seed_for(p)
            row.pop("capture", None)
            if args.baselines:
                torch._dynamo.reset()
                try:
                    row["baseline"] = baseline(p, lock_path=args.gpu_lock)
                except Exception as e:  # noqa: BLE001 - a reference torch.compile cannot handle is a result too
                    row["baseline"] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(f"inductor: {p.id} {'ok' if row['ok'] else row['error'][:200]}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
