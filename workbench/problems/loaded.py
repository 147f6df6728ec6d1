"""A problem file's module once imported (`LoadedProblem`), the execution of a file with its
sizes overridden (`exec_module`), and the check of the counts it declares. Below the loader and
the CPU-size chooser, which both build one."""
from __future__ import annotations

import ast
import math
import re
import types
from dataclasses import dataclass, field
from typing import Any, Mapping

from workbench.errors import ProblemFileError

#: The module global where the loader records the size overrides a problem module was executed
#: with (`LoadedProblem.overrides`), for code handed only the module (`execution.localcheck`).
SIZES_ATTR = "__workbench_sizes__"


@dataclass
class LoadedProblem:
    """A problem's module, imported. `sizes` are the module's size globals after overrides."""

    name: str
    module: types.ModuleType
    sizes: dict[str, Any] = field(default_factory=dict)
    #: Loaded for the CPU: the sizes overridden for it, and whether they came from the file's
    #: `CPU_SIZES` ("file") or were chosen automatically ("auto", `cpu_sizes.auto_cpu_sizes`).
    cpu_sizes: dict[str, Any] = field(default_factory=dict)
    cpu_sizes_source: str = ""
    #: Every size global given a value other than the file's own (the CPU sizes, then the
    #: caller's sizes): what a module written against the same file (a candidate that copies
    #: its globals) is loaded with too (`workbench.execution.candidate`).
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def Model(self) -> type:  # noqa: N802 - the contract's name
        return self.module.Model

    def get_inputs(self) -> list:
        return list(self.module.get_inputs())

    def get_init_inputs(self) -> list:
        return list(self.module.get_init_inputs())

    def flops(self) -> float:
        """The file's `flops()` (0 without one). Raises ProblemFileError naming the problem when
        it raises or returns anything but a finite number >= 0."""
        return self._count("flops")

    def bytes_moved(self) -> float:
        """The file's `bytes_moved()` (0 without one); checked like `flops`."""
        return self._count("bytes_moved")

    def _count(self, fn_name: str) -> float:
        f = getattr(self.module, fn_name, None)
        if not callable(f):
            return 0.0
        try:
            value = f()
        except Exception as e:  # noqa: BLE001 - any error in user code becomes a clear message
            raise ProblemFileError(f"{self.name}: {fn_name}() raised {type(e).__name__}: {e}") from e
        return check_count(value, f"{self.name}: {fn_name}()")


def check_count(value: Any, what: str) -> float:
    """`value` as a float count (FLOPs, bytes); ProblemFileError naming `what` unless it is a
    finite real number >= 0 (NaN, inf, negatives, bools, strings and None are refused)."""
    if value is None or isinstance(value, (bool, str, bytes)):
        raise ProblemFileError(f"{what} returned {value!r} ({type(value).__name__}); it must return a number")
    try:
        count = float(value)
    except (TypeError, ValueError, OverflowError) as e:
        raise ProblemFileError(f"{what} returned {value!r}, which is not a number: {e}") from e
    if not math.isfinite(count) or count < 0:
        raise ProblemFileError(f"{what} returned {count!r}; a count must be a finite number >= 0 "
                               "(return 0 when it is unknown)")
    return count


# --------------------------------------------------------------------------- sizes
def _literal(node: ast.AST) -> Any:
    """The value of an expression of integer literals (`4096`, `2048 * 2`, `1 << 14`), or a tuple
    or list of literals holding at least one integer (`(16, 32)`, `[32, "M", 64]`), else None.
    Names make an expression derived, not a literal."""
    if any(isinstance(n, (ast.Name, ast.Call, ast.Attribute, ast.Subscript)) for n in ast.walk(node)):
        return None
    try:
        value = ast.literal_eval(node) if isinstance(node, (ast.Constant, ast.Tuple, ast.List)) else \
            eval(compile(ast.Expression(node), "<size>", "eval"), {"__builtins__": {}})  # noqa: S307 - literals only
    except Exception:  # noqa: BLE001 - not a constant expression
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, (tuple, list)) and any(_is_int(v) for v in value) and \
            all(isinstance(v, (int, float, str)) or v is None for v in value):
        return value
    return None


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _assignments(tree: ast.Module) -> dict[str, list[tuple[ast.AST, Any]]]:
    """Top-level assignments by name: (the node holding the value, a setter of a new value)."""
    out: dict[str, list[tuple[ast.AST, Any]]] = {}
    for stmt in tree.body:
        pairs: list[tuple[ast.AST, ast.AST, Any]] = []
        if isinstance(stmt, ast.Assign) and stmt.value is not None:
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    pairs.append((target, stmt.value, lambda v, s=stmt: setattr(s, "value", v)))
                elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(stmt.value, (ast.Tuple, ast.List)) \
                        and len(target.elts) == len(stmt.value.elts):
                    for i, (t, v) in enumerate(zip(target.elts, stmt.value.elts)):
                        if isinstance(t, ast.Name):
                            pairs.append((t, v, lambda new, e=stmt.value.elts, i=i: e.__setitem__(i, new)))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            pairs.append((stmt.target, stmt.value, lambda v, s=stmt: setattr(s, "value", v)))
        for target, value, setter in pairs:
            out.setdefault(target.id, []).append((value, setter))
    return out


def free_sizes(source: str) -> dict[str, Any]:
    """The file's sizes that are set by a literal: module-level names whose last top-level
    assignment is an integer expression without names (`batch_size = 16`, `N = 2048 * 2`) or a
    tuple / list of literals with integers among them (`input_shape = (4096,)`, `config = [64,
    "M", 128]`; the integers are the sizes). Names computed from other names
    (`dim2 = dim1 * 2`, `normalized_shape = (features, dim1, dim2)`) are derived: they follow
    when their inputs are overridden through `exec_module`."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    out: dict[str, int | tuple[int, ...]] = {}
    for name, assigned in _assignments(tree).items():
        value = _literal(assigned[-1][0])
        if value is not None and not name.startswith("_") and name != "CPU_SIZES":
            out[name] = value
    return out


def _constant(value: Any) -> ast.AST:
    if isinstance(value, list):
        return ast.List(elts=[_constant(v) for v in value], ctx=ast.Load())
    if isinstance(value, tuple):
        return ast.Tuple(elts=[_constant(v) for v in value], ctx=ast.Load())
    return ast.Constant(value=value)


def sized_names(source: str) -> set[str]:
    """Module-level names `source` assigns (the names an override can be applied to where the
    file assigns them); empty when it does not parse."""
    try:
        return set(_assignments(ast.parse(source)))
    except SyntaxError:
        return set()


def run_sized(source: str, module: types.ModuleType, overrides: Mapping[str, Any] | None = None,
              filename: str | None = None) -> None:
    """Execute `source` in `module`'s namespace, each global in `overrides` given its value.

    An overridden name's last top-level assignment is rewritten to the new value before the file
    runs, so globals computed from it afterwards (`dim2 = dim1 * 2`, `shape = (batch, dim)`)
    follow; the value is also set on the module afterwards (a name assigned in another way keeps
    the override too). Only constants change: every statement keeps its line, so code compiled
    under `filename` reads its source from that file (Triton does). Exceptions of the source
    (SyntaxError included) propagate."""
    overrides = dict(overrides or {})
    filename = filename or getattr(module, "__file__", None) or "<sized>"
    tree = ast.parse(source, filename=filename)
    if overrides:
        assigned = _assignments(tree)
        for key, value in overrides.items():
            if key in assigned:
                assigned[key][-1][1](_constant(value))
        ast.fix_missing_locations(tree)
    exec(compile(tree, filename, "exec"), module.__dict__)  # noqa: S102 - the caller's file, at its sizes
    for key, value in overrides.items():
        module.__dict__[key] = value


def exec_module(source: str, name: str, overrides: Mapping[str, Any] | None = None) -> types.ModuleType:
    """`source` executed as a fresh module, each global in `overrides` given its value where the
    file assigns it (`run_sized`). ProblemFileError naming `name` when the file fails to run, or
    fails only with the overrides."""
    overrides = dict(overrides or {})
    try:
        ast.parse(source, filename=name)
    except SyntaxError as e:
        raise ProblemFileError(f"{name}: syntax error at line {e.lineno}: {e.msg}") from e
    module = types.ModuleType("_wb_problem_" + re.sub(r"\W", "_", name))
    module.__file__ = f"<problem {name}>"
    try:
        run_sized(source, module, overrides)
    except Exception as e:  # noqa: BLE001 - any error in user code becomes a clear message
        what = f" with sizes {dict(overrides)}" if overrides else ""
        raise ProblemFileError(f"{name}: executing the file{what} failed: {type(e).__name__}: {e}") from e
    return module
