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
- cpu_sizes: the project's automatic CPU sizes bring the reference near their own targets, and
  it runs on the CPU at them;
- small: at reduced sizes (size literals rewritten in the source, so that sizes computed from
  them follow) the reference runs on the CPU, deterministically, and its output is finite, not
  constant, and changes with the inputs.

The corpus as a whole: the kinds in CORPUS.md are exactly `kb_corpus/kinds.py`'s KINDS; each
kind's files are exactly those whose full-size trace shows it; every kind has at least two
files, every file at least one kind that is not an idiom, and there are at least 120 files.

Cases the current engine fails are listed in KNOWN_ENGINE_GAPS and marked strict xfail: they
run for real, and a fix that makes one pass fails the suite until its entry is removed.
"""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest
import torch
from torch.utils._pytree import tree_flatten

from kb_corpus.kinds import (KINDS, Trace, corpus_files, level_of, nbytes, problem_id,
                             read_table, shown, trace)
from workbench.problems import load_dir, load_source
from workbench.problems.counts import DERIVED
from workbench.problems.cpu_sizes import MAX_BYTES, MAX_FLOPS, cpu_footprint

CORPUS = Path(__file__).parent / "kb_corpus"
FILES = corpus_files(CORPUS)
_NAME = re.compile(r"^[1-9][0-9]*_[A-Za-z0-9][A-Za-z0-9_]*$")

#: Bounds of a problem at its full size.
MAX_PROBLEM_BYTES = 1.5 * 2**30           # inputs + parameters + buffers
H200_FLOPS, H200_BYTES_PER_S, LAUNCH_S = 50e12, 4e12, 3e-6
MIN_EAGER_MS, MAX_EAGER_MS = 0.05, 20.0

#: Reduced sizes for the CPU check: bytes of every kernel's outputs, and FLOPs; smallest size.
SMALL_BYTES, SMALL_FLOPS, SMALL_FLOOR = 2**20, 1e7, 8

#: (check, problem id) -> what the current engine does wrong there. Each is a strict xfail.
KNOWN_ENGINE_GAPS: dict[tuple[str, str], str] = {}


def _cases(check: str) -> list:
    out = []
    for f in FILES:
        reason = KNOWN_ENGINE_GAPS.get((check, problem_id(f)))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(f, id=problem_id(f), marks=marks))
    return out


@functools.lru_cache(maxsize=None)
def _full_trace(path: Path) -> Trace:
    """A corpus file's reference at its full size, with its torch calls (cached: the import,
    meta and coverage checks share it)."""
    return trace(path.read_text(), problem_id(path), calls=True)


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
    """The file's source with its size literals halved until the reference's kernels write at
    most SMALL_BYTES and do at most SMALL_FLOPS. Above four times the target every literal is
    halved at once, nearer it the largest one; a halving the reference rejects (divisibility, a
    fixed layer width) is undone and that literal kept."""
    name = problem_id(path)
    tree = ast.parse(path.read_text())
    sites = _size_literals(tree)
    frozen: set[int] = set()

    def cost(t: Trace | None = None) -> tuple[float, float] | None:
        try:
            t = t or trace(ast.unparse(tree), name)
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
        far = max(current[0] / SMALL_BYTES, current[1] / SMALL_FLOPS) > 4
        new = (halve(movable) if far and len(movable) > 1 else None) or halve([largest])
        if new is None:
            frozen.add(largest)
        else:
            current = new
    assert current[0] <= 16 * SMALL_BYTES and current[1] <= 16 * SMALL_FLOPS, (name, current)
    return ast.unparse(tree)


def _cpu_outputs(module, input_seed: int) -> list[torch.Tensor]:
    # The CPU generator only: torch.manual_seed also queues seeding of every accelerator
    # backend, which costs more than these small runs.
    torch.default_generator.manual_seed(0)
    with torch.device("cpu"):
        model = module.Model(*module.get_init_inputs())
    torch.default_generator.manual_seed(input_seed)
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
    p = problems[problem_id(path)]
    assert p.level == level_of(path) and p.source == path.read_text()
    assert p.count_source == DERIVED and p.flops > 0 and p.bytes_moved > 0
    # The derived counts hold at least what this trace sees: the products' FLOPs, and the
    # inputs, parameters and outputs once.
    t = _full_trace(path)
    assert p.flops >= 0.99 * t.flops
    assert p.bytes_moved >= t.held_bytes + nbytes(t.outs) - nbytes(set(t.outs) & set(t.inputs))


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
    cpu = load_source(path.read_text(), name=problem_id(path), cpu=True)
    footprint = cpu_footprint(cpu.module, problem_id(path))
    assert footprint is not None, "the reference does not trace at the chosen CPU sizes"
    traced_bytes, flops = footprint
    assert traced_bytes <= 4 * MAX_BYTES and flops <= 4 * MAX_FLOPS, (
        f"CPU sizes {cpu.cpu_sizes} leave {traced_bytes / 2**20:.0f} MiB and {flops:.2g} FLOPs")
    assert _cpu_outputs(cpu.module, 1), "the reference runs at the chosen sizes"


@pytest.mark.parametrize("path", _cases("small"))
def test_meaningful_at_small_sizes_on_cpu(path: Path):
    small = load_source(_small_source(path), name=problem_id(path))
    first, again, other = (_cpu_outputs(small.module, s) for s in (1, 1, 2))
    assert first and len(first) == len(other)
    floats = [t for t in first if t.is_floating_point()]
    assert all(bool(torch.isfinite(t).all()) for t in floats), "non-finite output"
    for a, b in zip(first, again):
        assert torch.equal(a, b), "the reference is not deterministic for fixed seeds"
    varied = [t for t in first if t.numel() > 1]
    assert not varied or any(bool((t != t.reshape(-1)[0]).any()) for t in varied), "constant output"
    assert any(not torch.equal(a, b) for a, b in zip(first, other)), "output ignores the inputs"


# ---------------------------------------------------------------- coverage


def test_corpus_covers_every_kind_at_least_twice():
    table = read_table((CORPUS / "CORPUS.md").read_text())
    covered = shown(FILES, _full_trace)
    assert set(table) == set(KINDS), (set(KINDS) - set(table), set(table) - set(KINDS))
    for kind in KINDS:
        assert sorted(table[kind]) == sorted(covered[kind]), (
            kind, "listed, not shown:", sorted(set(table[kind]) - set(covered[kind])),
            "shown, not listed:", sorted(set(covered[kind]) - set(table[kind])),
            "regenerate CORPUS.md: PYTHONPATH=. python tests/problems/kb_corpus/kinds.py")
        assert len(covered[kind]) >= 2, f"{kind}: only {covered[kind]}"
    listed = {f for kind, files in table.items() if not kind.startswith("idiom:") for f in files}
    assert listed == {f"{p.parent.name}/{p.name}" for p in FILES}, "a file no kind lists"
    level1 = [p for p in FILES if p.parent.name == "level1"]
    annotated = [f for f in table["idiom: annotated forward"] if f.startswith("level1/")]
    assert len(annotated) > len(level1) / 2, "most level 1 files annotate forward"
    counts = {n: sum(p.parent.name == n for p in FILES) for n in ("level1", "level2", "level3")}
    assert len(FILES) >= 120, counts
    assert counts["level1"] >= 60 and counts["level2"] >= 35 and counts["level3"] >= 15, counts
