"""Load problem files (KernelBench contract) into `Problem` records and live modules."""
from __future__ import annotations

import ast
import functools
import hashlib
import re
import types
from pathlib import Path
from typing import Any, Callable, Iterable

from workbench.errors import ProblemFileError
from workbench.problems.counts import DECLARED, DERIVED, UNKNOWN, derive_counts
from workbench.problems.cpu_sizes import auto_cpu_sizes, size_globals
from workbench.problems.contract import Contract
from workbench.problems.loaded import SIZES_ATTR, LoadedProblem, exec_module
from workbench.records import Problem
from workbench.textfile import read_source

LIBRARY_DIR = Path(__file__).parent / "library"
_LEVEL_DIR = re.compile(r"^level(\d+)$")
_REQUIRED = ("Model", "get_inputs", "get_init_inputs")


def _check_contract(source: str, where: str) -> ast.Module:
    try:
        tree = ast.parse(source, filename=where)
    except SyntaxError as e:
        raise ProblemFileError(f"{where}: syntax error at line {e.lineno}: {e.msg}") from e
    defined = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    defined.add(t.id)
    missing = [n for n in _REQUIRED if n not in defined]
    if missing:
        raise ProblemFileError(
            f"{where}: missing {', '.join(missing)}; a problem file must define "
            "`class Model(nn.Module)`, `get_inputs()` and `get_init_inputs()` (KernelBench contract)"
        )
    return tree


def load_source(source: str, name: str = "problem", sizes: dict[str, Any] | None = None,
                cpu: bool = False, precision: str = "native") -> LoadedProblem:
    """Execute a problem source as a fresh module.

    `sizes` overrides size globals; `cpu=True` applies the file's own `CPU_SIZES`, or, when it
    has none, sizes chosen automatically (`cpu_sizes.auto_cpu_sizes`), then `sizes` on top.
    Overrides are applied where the file assigns them (`loaded.exec_module`), so sizes the file
    computes from them follow. `precision` (fp32 | fp16 | bf16; "native": none) makes the
    module's `Model` cast itself and `get_inputs()` / `get_init_inputs()` cast their
    floating-point tensors to it (`contract.Contract`, as the benchmark runs a problem at a
    precision). Raises ProblemFileError naming `name` when the contract is broken, the module
    fails to execute, or an override names no global of the file.
    """
    _check_contract(source, name)
    module = exec_module(source, name)
    overrides: dict[str, Any] = {}
    cpu_sizes: dict[str, Any] = {}
    cpu_source = ""
    if cpu:
        if getattr(module, "CPU_SIZES", None):
            cpu_source = "file"
            cpu_sizes = dict(module.CPU_SIZES)
        else:
            # No CPU_SIZES of its own: reduced sizes are chosen from the reference's trace and
            # recorded on the module, so every later reader sees the same choice.
            cpu_sizes = _auto_cpu_sizes(source, name)
            cpu_source = "auto" if cpu_sizes else ""
        overrides.update(cpu_sizes)
    overrides.update(sizes or {})
    for k in overrides:
        if k not in module.__dict__:
            raise ProblemFileError(f"{name}: size override {k!r} is not a global of the file")
    if overrides:
        module = exec_module(source, name, overrides)
    if cpu:
        module.CPU_SIZES = cpu_sizes
    # Recorded on the module too, for checks handed only the module (execution.localcheck).
    # Set after the file ran, so a file's own global of that name never stands for it.
    module.__dict__[SIZES_ATTR] = dict(overrides)
    if precision != "native":
        _cast_module(module, Contract(precision))
    size_globals = {k: v for k, v in module.__dict__.items()
                    if k.isupper() and isinstance(v, (int, float)) and not isinstance(v, bool)}
    size_globals.update(_size_globals(module))
    return LoadedProblem(name=name, module=module, sizes=size_globals, cpu_sizes=dict(cpu_sizes),
                         cpu_sizes_source=cpu_source, overrides=dict(overrides))


def _cast_module(module: types.ModuleType, contract: Contract) -> None:
    """Make `module`'s Model cast itself, and its input functions cast their floating-point
    tensors, to the contract's precision. The class is wrapped in place (its own name, so
    `super(Model, self)` in the file still works); an instance of a subclass is not cast by
    this wrapper (the caller casts what it builds)."""
    cls = module.Model
    init = cls.__init__

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if type(self) is cls:
            contract.cast_model(self)

    cls.__init__ = __init__
    for fn_name in ("get_inputs", "get_init_inputs"):
        fn = getattr(module, fn_name)
        setattr(module, fn_name, lambda fn=fn: contract.cast_inputs(list(fn())))
    module.__dict__["__workbench_precision__"] = contract.precision


_AUTO_CACHE: dict[str, dict[str, Any]] = {}


def _auto_cpu_sizes(source: str, name: str) -> dict[str, Any]:
    """`cpu_sizes.auto_cpu_sizes` of a source, remembered per source text (the worker loads a
    problem at CPU sizes several times per measurement)."""
    key = hashlib.sha256(source.encode()).hexdigest()
    if key not in _AUTO_CACHE:
        if len(_AUTO_CACHE) > 512:
            _AUTO_CACHE.clear()
        _AUTO_CACHE[key] = auto_cpu_sizes(source, name)
    return dict(_AUTO_CACHE[key])


def _size_globals(module: types.ModuleType) -> dict[str, Any]:
    return size_globals(module)


def _meta(tree: ast.Module, source: str) -> dict[str, Any]:
    """Literal metadata globals and the module docstring, read without executing the file."""
    meta: dict[str, Any] = {"description": (ast.get_docstring(tree) or "").strip()}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            key = node.targets[0].id
            if key in ("CATEGORY", "DTYPE", "TAGS"):
                try:
                    meta[key] = ast.literal_eval(node.value)
                except ValueError:
                    pass
    return meta


def load_file(path: str | Path, level: int | None = None, origin: str = "builtin",
              with_counts: bool = True) -> Problem:
    """Read one problem file into a `Problem` record. Raises ProblemFileError naming the file."""
    path = Path(path)
    source = read_source(path, "problem", ProblemFileError)
    tree = _check_contract(source, str(path))
    if level is None:
        m = _LEVEL_DIR.match(path.parent.name)
        level = int(m.group(1)) if m else 0
    meta = _meta(tree, source)
    # Executing the file validates it (a file that raises on import is reported here, naming it).
    loaded = load_source(source, name=str(path))
    flops, bytes_moved, counts_source = file_counts(loaded) if with_counts else (0.0, 0.0, "unknown")
    tags = meta.get("TAGS", ())
    if isinstance(tags, str):
        tags = (tags,)
    return Problem(
        id=f"L{level}/{path.stem}",
        level=level,
        name=path.stem,
        source=source,
        description=meta["description"],
        category=str(meta.get("CATEGORY", "")),
        dtype=str(meta.get("DTYPE", "fp32")),
        tags=tuple(str(t) for t in tags),
        flops=flops,
        bytes_moved=bytes_moved,
        origin=origin,
        counts_source=counts_source,
    )


def file_counts(loaded: LoadedProblem) -> tuple[float, float, str]:
    """(flops, bytes_moved, source) of a loaded file at its loaded sizes: each count the file
    declares (`flops()`, `bytes_moved()`) is used as is; a missing one is derived from the
    reference traced on the meta device (`counts.derive_counts`). Source: "declared" when the
    file declares both, else "derived", or "unknown" when a count is missing and the trace
    failed (that count is then 0)."""
    has_f = callable(getattr(loaded.module, "flops", None))
    has_b = callable(getattr(loaded.module, "bytes_moved", None))
    if has_f and has_b:
        return loaded.flops(), loaded.bytes_moved(), DECLARED
    derived = derive_counts(loaded)
    flops = loaded.flops() if has_f else derived.flops
    nbytes = loaded.bytes_moved() if has_b else derived.bytes_moved
    return flops, nbytes, (DERIVED if derived.source == DERIVED else UNKNOWN)


def load_dir(root: str | Path, origin: str | None = None,
             on_error: Callable[[Exception], None] | None = None) -> tuple[list[Problem], list[ProblemFileError]]:
    """Load every `levelN/*.py` under `root` (KernelBench layout).

    One bad file never stops the others: its error is collected (and passed to `on_error`)
    and loading goes on. Returns (problems sorted by id, errors).
    """
    root = Path(root)
    if not root.is_dir():
        raise ProblemFileError(f"{root}: not a directory; expected a folder holding level1/, level2/, ...")
    level_dirs = sorted(p for p in root.iterdir() if p.is_dir() and _LEVEL_DIR.match(p.name))
    if not level_dirs:
        raise ProblemFileError(f"{root}: no levelN/ folders found (KernelBench layout: levelN/NN_Name.py)")
    problems: list[Problem] = []
    errors: list[ProblemFileError] = []
    for d in level_dirs:
        level = int(_LEVEL_DIR.match(d.name).group(1))  # type: ignore[union-attr]
        for f in sorted(d.glob("*.py")):
            if f.name.startswith("_"):
                continue
            try:
                problems.append(load_file(f, level=level, origin=origin or str(root)))
            except ProblemFileError as e:
                errors.append(e)
                if on_error:
                    on_error(e)
    return sorted(problems, key=_sort_key), errors


def _sort_key(p: Problem):
    return (p.level, p.name)


@functools.lru_cache(maxsize=1)
def builtin_problems() -> tuple[Problem, ...]:
    """The built-in library. A broken built-in file is a bug: raise."""
    problems, errors = load_dir(LIBRARY_DIR, origin="builtin")
    if errors:
        raise ProblemFileError("built-in problem library is broken:\n" + "\n".join(map(str, errors)))
    return tuple(problems)


def list_problems(level: int | None = None, tag: str | None = None,
                  extra: Iterable[Problem] = ()) -> list[Problem]:
    out = list(builtin_problems()) + list(extra)
    if level is not None:
        out = [p for p in out if p.level == level]
    if tag is not None:
        out = [p for p in out if tag == p.category or tag in p.tags or tag == p.dtype]
    return out


def get_problem(problem_id: str) -> Problem:
    """A built-in problem by id ("L1/03_softmax") or by unique name ("03_softmax", "softmax")."""
    probs = builtin_problems()
    for p in probs:
        if p.id == problem_id:
            return p
    matches = [p for p in probs if p.name == problem_id or p.name.split("_", 1)[-1] == problem_id]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ProblemFileError(f"{problem_id!r} is ambiguous: {', '.join(p.id for p in matches)}")
    raise ProblemFileError(f"no problem {problem_id!r}; `workbench problems list` shows the ids")


