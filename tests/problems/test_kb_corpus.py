"""The KernelBench-style corpus in `tests/problems/kb_corpus/levelN/<N>_<Name>.py`: problems in the
benchmark's contract, layout, idioms and sizes, written here (CORPUS.md, beside the files, maps
each kind of problem to the files that cover it).

Per file:
- contract: `class Model(nn.Module)` with a `forward`, `get_inputs()`, `get_init_inputs()`, sizes
  as lower-case module globals, a name the KernelBench layout allows;
- import: the KernelBench folder loader (`load_dir`, what `workbench problems import DIR` runs)
  loads it, with counts derived from the reference (FLOPs and bytes > 0);
- meta: the reference runs at its FULL size on the meta device (shapes and dtypes, no compute),
  inside the corpus's bounds: inputs + parameters under 1.5 GiB, and an H200 eager estimate
  (product FLOPs at 50 TFLOP/s + every kernel's bytes at 4 TB/s + 3 us per launch) between
  0.05 and 20 ms;
- cpu_sizes: the project's automatic CPU sizes bring the reference near their own targets;
- small: at reduced sizes (size literals rewritten in the source, so that sizes computed from
  them follow) the reference runs on the CPU, deterministically, and its output is finite, not
  constant, and changes with the inputs.

The corpus as a whole: the kinds in CORPUS.md are exactly KINDS below; each kind's files are
exactly those whose traced reference shows it (checked at full size on the meta device); every
kind has at least two files, every file at least one kind, and there are at least 120 files.

Cases the current engine fails are listed in KNOWN_ENGINE_GAPS and marked strict xfail: they
run for real, and a fix that makes one pass fails the suite until its entry is removed.
"""
from __future__ import annotations

import ast
import functools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import flop_registry

from workbench.problems import load_dir, load_source
from workbench.problems.counts import DERIVED
from workbench.problems.cpu_sizes import MAX_BYTES, MAX_FLOPS, cpu_footprint
from workbench.problems.ops import classify_op

CORPUS = Path(__file__).parent / "kb_corpus"
FILES = sorted(CORPUS.glob("level*/*.py"), key=lambda p: (p.parent.name, int(p.stem.split("_")[0])))
_NAME = re.compile(r"^[1-9][0-9]*_[A-Za-z0-9][A-Za-z0-9_]*$")

#: Bounds of a problem at its full size.
MAX_PROBLEM_BYTES = 1.5 * 2**30           # inputs + parameters + buffers
H200_FLOPS, H200_BYTES_PER_S, LAUNCH_S = 50e12, 4e12, 3e-6
MIN_EAGER_MS, MAX_EAGER_MS = 0.05, 20.0

#: Reduced sizes for the CPU check: bytes of every kernel's outputs, and FLOPs; smallest size.
SMALL_BYTES, SMALL_FLOPS, SMALL_FLOOR = 4 * 2**20, 5e7, 8

#: (check, problem id) -> what the current engine does wrong there. Each is a strict xfail.
KNOWN_ENGINE_GAPS: dict[tuple[str, str], str] = {}


def _pid(path: Path) -> str:
    return f"L{int(path.parent.name[len('level'):])}/{path.stem}"


def _cases(check: str) -> list:
    out = []
    for f in FILES:
        reason = KNOWN_ENGINE_GAPS.get((check, _pid(f)))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(f, id=_pid(f), marks=marks))
    return out


# ---------------------------------------------------------------- tracing


@dataclass
class Trace:
    """One forward of a reference on the meta device."""

    model: Any
    init_inputs: list
    inputs: list
    outs: list
    launches: int = 0        # ATen ops that launch a kernel
    op_bytes: int = 0        # bytes every such op reads and writes
    out_bytes: int = 0       # bytes every such op writes
    flops: float = 0.0       # FLOPs of the products, convolutions and attention
    calls: list = field(default_factory=list)  # (name, args, kwargs, result) of torch calls

    @property
    def held_bytes(self) -> int:
        """Inputs, parameters and buffers: what the problem holds before it runs."""
        return _nbytes(self.inputs + list(self.model.parameters()) + list(self.model.buffers()))


def _nbytes(tensors) -> int:
    seen, total = set(), 0
    for t in tensors:
        if isinstance(t, torch.Tensor) and id(t) not in seen:
            seen.add(id(t))
            total += t.numel() * t.element_size()
    return total


class _Kernels(TorchDispatchMode):
    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if classify_op(func.overloadpacket.__name__) is not None:
            t = self.trace
            ins = _nbytes(tree_flatten((args, kwargs))[0])
            outs = _nbytes(tree_flatten(out)[0])
            t.launches += 1
            t.op_bytes += ins + outs
            t.out_bytes += outs
            if func.overloadpacket in flop_registry:
                t.flops += float(flop_registry[func.overloadpacket](*args, **kwargs, out_val=out))
        return out


#: Torch calls not worth recording (shape queries, property reads).
_QUIET = {"get", "dim", "size", "numel", "stride", "is_contiguous", "setitem"}


class _Calls(TorchFunctionMode):
    """Records the torch functions and tensor methods the reference calls (outermost only)."""

    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = getattr(func, "__name__", "").strip("_")
        if name not in _QUIET:
            self.trace.calls.append((name, args, kwargs, out))
        return out


def _trace(source: str, name: str, calls: bool = False) -> Trace:
    """The reference of `source` built and run on the meta device."""
    module = load_source(source, name=name).module
    with torch.device("meta"):
        init_inputs = module.get_init_inputs()
        model = module.Model(*init_inputs)
        inputs = module.get_inputs()
    inputs = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in inputs]
    model = model.to("meta")
    trace = Trace(model=model, init_inputs=init_inputs, inputs=inputs, outs=[])
    with torch.no_grad(), _Kernels(trace):
        if calls:
            with _Calls(trace):
                out = model(*inputs)
        else:
            out = model(*inputs)
    trace.outs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
    return trace


@functools.lru_cache(maxsize=None)
def _full_trace(path: Path) -> Trace:
    """A corpus file's reference at its full size, with its torch calls (cached: the meta and
    coverage checks share it)."""
    return _trace(path.read_text(), _pid(path), calls=True)


# ---------------------------------------------------------------- reduced sizes


def _size_literals(tree: ast.Module) -> list[ast.Constant]:
    """The int literals (> SMALL_FLOOR) that module-level assignments give: `n = 4096`,
    `h = w = 256`, `d, h, w = 32, 64, 64`, `shape = (64, 512)`, `layers = [1024, 512]`."""
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            values = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else [node.value]
            found += [v for v in values if isinstance(v, ast.Constant) and type(v.value) is int
                      and v.value > SMALL_FLOOR]
    return found


def _small_source(path: Path) -> str:
    """The file's source with its size literals halved until the reference's kernels write at most
    SMALL_BYTES and do at most SMALL_FLOPS. Far above the target every literal is halved at
    once, near it the largest one; a halving the reference rejects (divisibility, a fixed layer
    width) is undone and that literal kept."""
    name = _pid(path)
    tree = ast.parse(path.read_text())
    sites = _size_literals(tree)
    frozen: set[int] = set()

    def cost(t: Trace | None = None) -> tuple[float, float] | None:
        try:
            t = t or _trace(ast.unparse(tree), name)
        except Exception:  # noqa: BLE001 - a size the reference rejects
            return None
        return t.out_bytes + t.held_bytes, t.flops

    def halve(group: list[int]) -> tuple[float, float] | None:
        old = [sites[i].value for i in group]
        for i in group:
            sites[i].value = max(SMALL_FLOOR, sites[i].value // 2)
        new = cost()
        if new is None:
            for i, v in zip(group, old):
                sites[i].value = v
        return new

    current = cost(_full_trace(path))
    while current[0] > SMALL_BYTES or current[1] > SMALL_FLOPS:
        movable = [i for i, s in enumerate(sites) if i not in frozen and s.value > SMALL_FLOOR]
        if not movable:
            break
        largest = max(movable, key=lambda j: sites[j].value)
        far = max(current[0] / SMALL_BYTES, current[1] / SMALL_FLOPS) > 64
        new = (halve(movable) if far and len(movable) > 1 else None) or halve([largest])
        if new is None:
            frozen.add(largest)
        else:
            current = new
    assert current[0] <= 16 * SMALL_BYTES and current[1] <= 16 * SMALL_FLOPS, (name, current)
    return ast.unparse(tree)


def _cpu_outputs(module, input_seed: int) -> list[torch.Tensor]:
    torch.manual_seed(0)
    with torch.device("cpu"):
        model = module.Model(*module.get_init_inputs())
    torch.manual_seed(input_seed)
    inputs = module.get_inputs()
    with torch.no_grad():
        out = model(*inputs)
    return [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]


# ---------------------------------------------------------------- per-file checks


@pytest.fixture(scope="module")
def imported():
    """Every corpus file through the KernelBench folder loader, once: (problems by id, errors)."""
    problems, errors = load_dir(CORPUS, origin="kb_corpus")
    return {p.id: p for p in problems}, errors


@pytest.mark.parametrize("path", _cases("contract"))
def test_contract(path: Path):
    assert _NAME.match(path.stem), f"{path.name}: KernelBench names are <N>_<Name>.py"
    tree = ast.parse(path.read_text())
    top = {n.name: n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert {"Model", "get_inputs", "get_init_inputs"} <= set(top)
    model = top["Model"]
    assert any(ast.unparse(b) in ("nn.Module", "torch.nn.Module") for b in model.bases)
    assert any(isinstance(n, ast.FunctionDef) and n.name == "forward" for n in model.body)
    sizes = [t.id for n in tree.body if isinstance(n, ast.Assign) for target in n.targets
             for t in ast.walk(target) if isinstance(t, ast.Name)]
    assert sizes, "sizes live in module globals"
    assert all(s == s.lower() for s in sizes), f"upper-case globals {sizes}: sizes are lower-case"


@pytest.mark.parametrize("path", _cases("import"))
def test_imports_with_derived_counts(path: Path, imported):
    problems, errors = imported
    mine = [str(e) for e in errors if str(path) in str(e)]
    assert not mine, mine
    p = problems[_pid(path)]
    assert p.level == int(path.parent.name[len("level"):]) and p.source == path.read_text()
    assert p.count_source == DERIVED and p.flops > 0 and p.bytes_moved > 0
    # The derived counts hold at least what this trace sees: the products' FLOPs, and the
    # inputs, parameters and outputs once.
    t = _full_trace(path)
    assert p.flops >= 0.99 * t.flops
    assert p.bytes_moved >= t.held_bytes + _nbytes(t.outs) - _nbytes(set(t.outs) & set(t.inputs))


@pytest.mark.parametrize("path", _cases("meta"))
def test_full_size_on_meta(path: Path):
    t = _full_trace(path)
    assert t.outs and all(o.device.type == "meta" and o.numel() > 0 for o in t.outs)
    assert all(o.dtype in (torch.float32, torch.int64) for o in t.outs), [o.dtype for o in t.outs]
    assert t.held_bytes <= MAX_PROBLEM_BYTES, f"inputs + parameters {t.held_bytes / 2**30:.2f} GiB"
    eager_ms = 1e3 * (t.flops / H200_FLOPS + t.op_bytes / H200_BYTES_PER_S + t.launches * LAUNCH_S)
    assert MIN_EAGER_MS <= eager_ms <= MAX_EAGER_MS, f"estimated eager {eager_ms:.3f} ms"


@pytest.mark.parametrize("path", _cases("cpu_sizes"))
def test_automatic_cpu_sizes_reach_their_targets(path: Path):
    cpu = load_source(path.read_text(), name=_pid(path), cpu=True)
    footprint = cpu_footprint(cpu.module, _pid(path))
    assert footprint is not None, "the reference does not trace at the chosen CPU sizes"
    nbytes, flops = footprint
    assert nbytes <= 4 * MAX_BYTES and flops <= 4 * MAX_FLOPS, (
        f"CPU sizes {cpu.cpu_sizes} leave {nbytes / 2**20:.0f} MiB and {flops:.2g} FLOPs")


@pytest.mark.parametrize("path", _cases("small"))
def test_meaningful_at_small_sizes_on_cpu(path: Path):
    small = load_source(_small_source(path), name=_pid(path))
    first, again, other = (_cpu_outputs(small.module, s) for s in (1, 1, 2))
    assert first and len(first) == len(other)
    for a, b in zip(first, again):
        assert torch.equal(a, b), "the reference is not deterministic for fixed seeds"
    floats = [t for t in first if t.is_floating_point()]
    assert all(bool(torch.isfinite(t).all()) for t in floats), "non-finite output"
    varied = [t for t in first if t.numel() > 1]
    assert not varied or any(bool((t != t.reshape(-1)[0]).any()) for t in varied), "constant output"
    assert any(not torch.equal(a, b) for a, b in zip(first, other)), "output ignores the inputs"


# ---------------------------------------------------------------- coverage
# Each kind is a predicate over a file's full-size trace (its torch calls and their tensors),
# its source and its level. Tensors in `Trace.calls` stay referenced, so `id()` identifies them.

_T = torch.Tensor
_ACTIVATIONS = {"relu", "leaky_relu", "sigmoid", "tanh", "gelu", "selu", "hardsigmoid", "hardtanh",
                "softplus", "elu", "silu", "relu6"}
_NORMS = {"batch_norm", "instance_norm", "group_norm", "layer_norm"}
_POOLS = {f"{k}_pool{d}d" for k in ("max", "avg", "adaptive_avg", "adaptive_max") for d in (1, 2, 3)}
_REDUCTIONS = {"sum", "mean", "max", "min", "prod", "amax", "amin", "argmax", "argmin", "logsumexp"}


def _calls(t: Trace, *names: str) -> list[tuple]:
    return [(a, k, r) for n, a, k, r in t.calls if n in names]


def _arg(args, kwargs, i: int, key: str, default=None):
    return kwargs[key] if key in kwargs else (args[i] if len(args) > i else default)


def _made_by(t: Trace, *names: str) -> set[int]:
    return {id(r) for n, _, _, r in t.calls if n in names and isinstance(r, _T)}


def _consumes(t: Trace, name: str, producers: set[int]) -> bool:
    """Some `name` call takes a tensor that one of `producers` returned as its first input."""
    return any(a and id(a[0]) in producers for a, _, _ in _calls(t, name))


def _reduces(t: Trace, *names: str) -> bool:
    return any(_arg(a, k, 1, "dim") is not None for a, k, _ in _calls(t, *names))


@dataclass
class _Product:
    a: _T
    b_shape: tuple          # as (..., K, N), or (K,) for a vector
    b_transposed: bool
    out: Any

    @property
    def mkn(self) -> tuple[int, int, int]:
        m = self.a.shape[-2] if self.a.dim() >= 2 else 1
        return m, self.a.shape[-1], (self.b_shape[-1] if len(self.b_shape) >= 2 else 1)


def _transposed(x) -> bool:
    return isinstance(x, _T) and x.dim() >= 2 and x.stride(-2) == 1 and x.stride(-1) != 1


def _products(t: Trace) -> list[_Product]:
    out = []
    for name, args, kwargs, res in t.calls:
        ops = [x for x in tree_flatten(list(args))[0] if isinstance(x, _T)]
        if name in ("matmul", "mm", "bmm", "mv", "einsum") and len(ops) == 2:
            out.append(_Product(ops[0], tuple(ops[1].shape), _transposed(ops[1]), res))
            out[-1].a_transposed = _transposed(ops[0])
        elif name == "linear":
            w = _arg(args, kwargs, 1, "weight")
            out.append(_Product(args[0], (w.shape[1], w.shape[0]), False, res))
            out[-1].a_transposed = False
    return out


def _convs(t: Trace) -> list[dict]:
    out = []
    for name, args, kwargs, _ in t.calls:
        m = re.fullmatch(r"conv(_transpose)?([123])d", name)
        if m:
            tr = bool(m.group(1))
            pick = (lambda i, d: _arg(args, kwargs, i, d, 1))
            as_tuple = (lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,))
            out.append(dict(dims=int(m.group(2)), transposed=tr, x=args[0], w=args[1],
                            stride=as_tuple(pick(3, "stride")),
                            dilation=as_tuple(pick(7 if tr else 5, "dilation")),
                            groups=pick(6, "groups")))
    return out


def _depthwise(c: dict) -> bool:
    return not c["transposed"] and c["groups"] > 1 and c["groups"] == c["x"].shape[1] and c["w"].shape[1] == 1


def _softmax_dims(t: Trace, name: str) -> list[tuple[int, int]]:
    """(dim as written, rank) of each softmax-like call."""
    return [(_arg(a, k, 1, "dim"), a[0].dim()) for a, k, _ in _calls(t, name)]


def _middle(dim: int, rank: int) -> bool:
    return rank >= 3 and 0 < dim % rank < rank - 1


def _residual(t: Trace) -> bool:
    params = {id(p) for p in t.model.parameters()}
    for a, _, _ in _calls(t, "add", "iadd", "add_"):
        ts = [x for x in a[:2] if isinstance(x, _T)]
        if len(ts) == 2 and ts[0] is not ts[1] and ts[0].shape == ts[1].shape \
                and not {id(x) for x in ts} & params:
            return True
    return False


def _rms(t: Trace) -> bool:
    return _consumes(t, "mean", _made_by(t, "pow")) and bool(_calls(t, "sqrt", "rsqrt"))


def _lp(t: Trace, p) -> bool:
    return any(_arg(a, k, 1, "p") == p for a, k, _ in _calls(t, "norm"))


def _l1(t: Trace) -> bool:
    return _consumes(t, "sum", _made_by(t, "abs")) and bool(_calls(t, "div"))


def _written_norm(t: Trace) -> bool:
    return _rms(t) or _l1(t) or _lp(t, 2) or _lp(t, "fro")


def _cumsum_inputs(t: Trace) -> list[_T]:
    return [a[0] for a, _, _ in _calls(t, "cumsum")]


def _exclusive(t: Trace) -> bool:
    if _consumes(t, "cumsum", _made_by(t, "cat")):
        return True
    sums = {id(r): id(a[0]) for a, _, r in _calls(t, "cumsum")}
    return any(len(a) == 2 and id(a[0]) in sums and sums[id(a[0])] == id(a[1])
               for a, _, _ in _calls(t, "sub"))


def _masked_cumsum(t: Trace) -> bool:
    from_bool = {id(r) for a, _, r in _calls(t, "to", "float") if a[0].dtype == torch.bool}
    masked = {id(r) for a, _, r in _calls(t, "mul")
              if any(isinstance(x, _T) and (x.dtype == torch.bool or id(x) in from_bool) for x in a)}
    return any(id(x) in masked for x in _cumsum_inputs(t))


def _scaled(t: Trace) -> bool:
    return any(any(isinstance(x, (int, float)) and not isinstance(x, bool) for x in a[:2])
               for a, _, _ in _calls(t, "mul", "div", "truediv"))


def _sliced_mask(t: Trace) -> bool:
    buffers = {id(b): b for b in t.model.buffers() if b.dim() == 4}
    return bool(_calls(t, "masked_fill")) and any(
        id(a[0]) in buffers and r.shape[-1] < a[0].shape[-1] for a, _, r in _calls(t, "getitem"))


def _global_names(source: str) -> set[str]:
    tree = ast.parse(source)
    return {n.id for s in tree.body if isinstance(s, ast.Assign) for tg in s.targets
            for n in ast.walk(tg) if isinstance(n, ast.Name)}


def _tied(source: str) -> bool:
    """A size global given to two dimensions of one input tensor (`torch.rand(n, n)`)."""
    tree = ast.parse(source)
    sizes = _global_names(source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs")
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
        names = [a.id for a in call.args if isinstance(a, ast.Name) and a.id in sizes]
        if len(names) != len(set(names)):
            return True
    return False


def _derived(source: str) -> bool:
    """A module global computed from another (`in_channels = planes * 4`, `shape = [h, w]`)."""
    sizes = _global_names(source)
    for s in ast.parse(source).body:
        if isinstance(s, ast.Assign) and any(isinstance(n, ast.Name) and n.id in sizes
                                             for n in ast.walk(s.value)):
            return True
    return False


def _level2(check: Callable[[Trace], bool]) -> Callable[[Trace, str, int], bool]:
    return lambda t, src, level: level >= 2 and check(t)


def _level3(check: Callable[[Trace], bool]) -> Callable[[Trace, str, int], bool]:
    return lambda t, src, level: level == 3 and check(t)


def _traced(check: Callable[[Trace], bool]) -> Callable[[Trace, str, int], bool]:
    return lambda t, src, level: check(t)


def _any_product(pred: Callable[[_Product], bool]) -> Callable[[Trace, str, int], bool]:
    return _traced(lambda t: any(pred(p) for p in _products(t)))


def _any_conv(pred: Callable[[dict], bool]) -> Callable[[Trace, str, int], bool]:
    return _traced(lambda t: any(pred(c) for c in _convs(t)))


def _called(*names: str) -> Callable[[Trace, str, int], bool]:
    return _traced(lambda t: bool(_calls(t, *names)))


def _irregular(p: _Product) -> bool:
    return sum(d > 64 and d % 8 != 0 for d in p.mkn) >= 2


KINDS: dict[str, Callable[[Trace, str, int], bool]] = {
    # matrix products (linear layers count as x @ W^T)
    "matmul: square": _any_product(lambda p: len(set(p.mkn)) == 1 and p.mkn[0] >= 256),
    "matmul: rectangular": _any_product(lambda p: len(set(p.mkn)) > 1 and min(p.mkn) >= 256),
    "matmul: batched": _any_product(lambda p: p.a.dim() >= 3 and len(p.b_shape) >= 3),
    "matmul: transposed operand": _any_product(lambda p: p.a_transposed or p.b_transposed),
    "matmul: 3-D tensor times matrix": _any_product(lambda p: p.a.dim() == 3 and len(p.b_shape) == 2),
    "matmul: 4-D tensor times matrix": _any_product(lambda p: p.a.dim() == 4 and len(p.b_shape) == 2),
    "matmul: matrix-vector": _any_product(lambda p: p.mkn[2] == 1 and p.mkn[0] > 1),
    "matmul: diagonal times matrix": _traced(lambda t: bool(
        {id(r) for a, _, r in _calls(t, "diag") if a[0].dim() == 1} & {id(p.a) for p in _products(t)})),
    "matmul: triangular result": _traced(lambda t: any(
        id(a[0]) in {id(p.out) for p in _products(t)} for a, _, _ in _calls(t, "tril", "triu"))),
    "matmul: large K": _any_product(lambda p: p.mkn[1] >= 65536 and p.mkn[1] >= 16 * max(p.mkn[0], p.mkn[2])),
    "matmul: small K": _any_product(lambda p: p.mkn[1] <= 64 and min(p.mkn[0], p.mkn[2]) >= 1024),
    "matmul: irregular sizes": _any_product(_irregular),
    "matmul: matrix times a scalar input": _traced(lambda t: any(
        any(y is x for x in t.inputs if not isinstance(x, _T) for y in a) for a, _, _ in _calls(t, "mul"))),
    # activations
    **{f"activation: {n}": _called(n) for n in ("relu", "leaky_relu", "sigmoid", "tanh", "gelu",
                                                "selu", "hardsigmoid", "hardtanh", "softplus", "elu")},
    "activation: swish": _traced(lambda t: bool(_calls(t, "silu")) or any(
        len(a) == 2 and id(a[1]) in {id(r) for b, _, r in _calls(t, "sigmoid") if b[0] is a[0]}
        for a, _, _ in _calls(t, "mul"))),
    "activation: softsign written out": lambda t, src, level: bool(
        re.search(r"/ \(1 \+ torch\.abs\((\w+)\)\)", src)) and bool(_calls(t, "abs")),
    "activation: tanh-approximate GELU written out": lambda t, src, level: (
        "0.044715" in src and bool(_calls(t, "tanh"))),
    # softmax
    "softmax over dim=1 of 2-D": _traced(lambda t: (1, 2) in _softmax_dims(t, "softmax")),
    "softmax over dim=-1": _traced(lambda t: any(d == -1 for d, _ in _softmax_dims(t, "softmax"))),
    "softmax over a middle dim": _traced(lambda t: any(_middle(*x) for x in _softmax_dims(t, "softmax"))),
    "log_softmax over dim=1 of 2-D": _traced(lambda t: (1, 2) in _softmax_dims(t, "log_softmax")),
    "log_softmax over a middle dim": _traced(
        lambda t: any(_middle(*x) for x in _softmax_dims(t, "log_softmax"))),
    # normalisation
    "norm: batch": _called("batch_norm"),
    "norm: instance": _called("instance_norm"),
    "norm: group": _called("group_norm"),
    "norm: layer over several trailing dims": _traced(lambda t: any(
        len(_arg(a, k, 1, "normalized_shape")) >= 2 for a, k, _ in _calls(t, "layer_norm"))),
    "norm: RMS written out": _traced(_rms),
    "norm: Frobenius division": _traced(lambda t: _lp(t, "fro")),
    "norm: L1 normalisation": _traced(_l1),
    "norm: L2 normalisation": _traced(lambda t: _lp(t, 2)),
    # reductions over a chosen dim
    **{f"reduction: {n} over a dim": _traced(functools.partial(lambda n, t: _reduces(t, n), n))
       for n in ("sum", "mean", "max", "min", "prod", "argmax", "argmin")},
    # cumulative
    "cumulative: cumsum": _called("cumsum"),
    "cumulative: cumprod": _called("cumprod"),
    "cumulative: reverse cumsum": _traced(lambda t: _consumes(t, "cumsum", _made_by(t, "flip"))),
    "cumulative: exclusive cumsum": _traced(_exclusive),
    "cumulative: masked cumsum": _traced(_masked_cumsum),
    # pooling
    **{f"pooling: {k} {d}-D": _called(f"{k}_pool{d}d") for k in ("max", "avg") for d in (1, 2, 3)},
    # convolutions
    **{f"conv: {d}-D": _any_conv(functools.partial(lambda d, c: c["dims"] == d, d)) for d in (1, 2, 3)},
    "conv: transposed": _any_conv(lambda c: c["transposed"]),
    "conv: depthwise": _any_conv(_depthwise),
    "conv: depthwise-separable": _traced(lambda t: any(_depthwise(c) for c in _convs(t)) and any(
        c["groups"] == 1 and set(c["w"].shape[2:]) == {1} for c in _convs(t))),
    "conv: dilated": _any_conv(lambda c: max(c["dilation"]) > 1),
    "conv: strided": _any_conv(lambda c: max(c["stride"]) > 1),
    "conv: grouped": _any_conv(lambda c: c["groups"] > 1 and not _depthwise(c)),
    "conv: asymmetric kernel": _any_conv(lambda c: len(set(c["w"].shape[2:])) > 1),
    # losses
    "loss: MSE": _traced(lambda t: bool(_calls(t, "mse_loss")) or _consumes(
        t, "mean", {id(r) for a, _, r in _calls(t, "pow") if id(a[0]) in _made_by(t, "sub")})),
    "loss: cross-entropy": _called("cross_entropy"),
    "loss: Huber / smooth L1": _called("smooth_l1_loss", "huber_loss"),
    "loss: KL divergence": _called("kl_div"),
    "loss: hinge": _traced(lambda t: _consumes(t, "clamp", _made_by(t, "rsub"))),
    "loss: cosine similarity": _called("cosine_similarity"),
    "loss: triplet margin": _called("triplet_margin_loss"),
    # compositions (levels 2 and 3)
    "composition: GEMM then activation": _level2(
        lambda t: bool(_products(t)) and bool(_calls(t, *_ACTIVATIONS))),
    "composition: convolution then activation": _level2(
        lambda t: bool(_convs(t)) and bool(_calls(t, *_ACTIVATIONS))),
    "composition: GEMM or convolution then normalisation": _level2(
        lambda t: bool(_products(t) or _convs(t)) and (bool(_calls(t, *_NORMS)) or _written_norm(t))),
    "composition: convolution then pooling": _level2(lambda t: bool(_convs(t)) and bool(_calls(t, *_POOLS))),
    "composition: GEMM or convolution then reduction": _level2(
        lambda t: bool(_products(t) or _convs(t)) and _reduces(t, *_REDUCTIONS)),
    "composition: scaling by a constant": _level2(_scaled),
    "composition: residual connection": _level2(_residual),
    "network: MLP": _level3(lambda t: len({id(_arg(a, k, 1, "weight")) for a, k, _ in _calls(t, "linear")}) >= 3
                            and not (_convs(t) or _calls(t, "softmax", "multi_head_attention_forward",
                                                        "lstm", "gru"))),
    "network: transformer block": _level3(lambda t: bool(_calls(t, "layer_norm")) and _residual(t) and bool(
        _calls(t, "softmax", "multi_head_attention_forward"))),
    "network: causal attention, mask buffer sliced by sequence length": _traced(_sliced_mask),
    "network: nn.LSTM": _called("lstm"),
    "network: nn.GRU": _called("gru"),
    "network: bidirectional RNN": _traced(lambda t: any(
        isinstance(m, torch.nn.RNNBase) and m.bidirectional for m in t.model.modules())),
    "network: RNN cell stepped in a loop": _level3(lambda t: len(_calls(t, "lstm_cell", "gru_cell")) >= 8 or any(
        sum(_arg(a, k, 1, "weight") is w for a, k, _ in _calls(t, "linear")) >= 8 for w in t.model.parameters())),
    "network: ResNet-style block": _level3(lambda t: _residual(t) and bool(_calls(t, "batch_norm")) and bool(
        _convs(t)) and all(c["groups"] == 1 for c in _convs(t))),
    "network: VGG-style stack": _level3(lambda t: sum(c["w"].shape[2:] == (3, 3) for c in _convs(t)) >= 4
                                        and len(_calls(t, "max_pool2d")) >= 3),
    "network: MobileNet-style block": _level3(lambda t: any(_depthwise(c) for c in _convs(t)) and any(
        set(c["w"].shape[2:]) == {1} for c in _convs(t))),
    # the benchmark's idioms
    "idiom: annotated forward": lambda t, src, level: bool(
        re.search(r"def forward\(self,[^)]*: torch\.Tensor[^)]*\) -> torch\.Tensor:", src)),
    "idiom: several inputs": _traced(lambda t: len(t.inputs) >= 2),
    "idiom: a non-tensor input": _traced(lambda t: any(not isinstance(x, _T) for x in t.inputs)),
    "idiom: a list or tuple among the init inputs": _traced(
        lambda t: any(isinstance(x, (list, tuple)) for x in t.init_inputs)),
    "idiom: one size global for two dimensions": lambda t, src, level: _tied(src),
    "idiom: a global computed from another": lambda t, src, level: _derived(src),
}


def _corpus_table() -> dict[str, list[str]]:
    """CORPUS.md's table: kind -> files (`levelN/<N>_<Name>.py`)."""
    table: dict[str, list[str]] = {}
    for line in (CORPUS / "CORPUS.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].isdigit():
            files = re.findall(r"level\d+/[^\s,`]+\.py", cells[2])
            assert int(cells[1]) == len(files), line
            table[cells[0].strip("`")] = files
    return table


def _shown() -> dict[str, list[str]]:
    """kind -> the corpus files whose full-size trace shows it."""
    shown: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for path in FILES:
        t = _full_trace(path)
        source, level = path.read_text(), int(path.parent.name[len("level"):])
        for kind, check in KINDS.items():
            if check(t, source, level):
                shown[kind].append(f"{path.parent.name}/{path.name}")
    return shown


def test_corpus_covers_every_kind_at_least_twice():
    table, shown = _corpus_table(), _shown()
    assert set(table) == set(KINDS), (set(KINDS) - set(table), set(table) - set(KINDS))
    for kind in KINDS:
        assert sorted(table[kind]) == sorted(shown[kind]), (
            kind, "listed, not shown:", sorted(set(table[kind]) - set(shown[kind])),
            "shown, not listed:", sorted(set(shown[kind]) - set(table[kind])))
        assert len(shown[kind]) >= 2, f"{kind}: only {shown[kind]}"
    listed = {f for kind, files in table.items() if not kind.startswith("idiom:") for f in files}
    assert listed == {f"{p.parent.name}/{p.name}" for p in FILES}, "a file no kind lists"
    level1 = [p for p in FILES if p.parent.name == "level1"]
    annotated = [f for f in table["idiom: annotated forward"] if f.startswith("level1/")]
    assert len(annotated) > len(level1) / 2, "most level 1 files annotate forward"
    counts = {n: sum(p.parent.name == n for p in FILES) for n in ("level1", "level2", "level3")}
    assert len(FILES) >= 120 and counts["level1"] >= 60 and counts["level2"] >= 35 and counts["level3"] >= 15
