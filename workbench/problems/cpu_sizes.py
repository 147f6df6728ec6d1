"""Reduced sizes for the CPU check, found automatically when a file has no `CPU_SIZES`.

The CPU executor runs the reference and Triton's interpreter on the CPU; a KernelBench file at
its full size can ask for gigabytes (a ReLU over 4096 x 393216 floats) and hours of interpreted
FLOPs. `auto_cpu_sizes(source)` picks smaller values for the file's sizes and returns them as a
`CPU_SIZES` dict:

- what is reduced: the file's *free* sizes (`loaded.free_sizes`): module-level names set by an
  integer literal (`batch_size = 16`, `N = 2048 * 2`, any case) and each integer of a
  tuple / list literal (`input_shape = (4096,)`, `config = [64, "M", 128]`), above `MIN_SIZE`.
  Sizes the file computes from them (`dim2 = dim1 * 2`, `normalized_shape = (features, dim1,
  dim2)`) follow, since overrides are applied where the file assigns them (`loaded.exec_module`);
- how: the largest remaining value is halved (quartered while the footprint is over 16 times
  the targets) and the change kept when the reference still
  traces on the meta device (`counts.derive_counts`, `trace.run`); when halving it alone breaks
  the reference (a residual that needs `in_features == out_features`), every free value equal
  to it is halved together (tied sizes); when that breaks it too, the value is left as it is.
  This goes on until the traced footprint and FLOPs are under `MAX_BYTES` and `MAX_FLOPS`, or
  `MAX_TRIALS` trials were made. Values of `MIN_SIZE` or less (kernel sizes, channel counts of
  3, head counts, reduction dims) are never touched.

A file's own `CPU_SIZES` always wins: that is how a user overrides the choice. The footprint is
`op_bytes + min_bytes` from the trace (every tensor any op reads or writes, plus inputs,
outputs and parameters): an upper bound on what the reference allocates at once. Files whose
shapes are literals inside `get_inputs()` (no size globals) keep their full size.
"""
from __future__ import annotations

import types
from typing import Any

from workbench.errors import ProblemFileError
from workbench.problems.counts import DERIVED, derive_counts
from workbench.problems.loaded import LoadedProblem, exec_module, free_sizes

#: Targets for the reduced run (bytes traced, FLOPs traced) and the smallest size reduced. The
#: Triton interpreter runs about 1e7 FLOPs of a tiled matmul, or 1e5 elements of an elementwise
#: kernel, per second on one core; a check makes a dozen calls and the timing a dozen more.
MAX_BYTES = 2 * 2**20
MAX_FLOPS = 1e7
MIN_SIZE = 8
#: Most reduced configurations traced for one file.
MAX_TRIALS = 96

Slot = tuple[str, int]  # (name, element index; -1 for an integer global)


def size_globals(module: types.ModuleType) -> dict[str, int]:
    """The module's integer globals that may be sizes (not private, not bools)."""
    return {k: v for k, v in vars(module).items()
            if not k.startswith("_") and isinstance(v, int) and not isinstance(v, bool)
            and k != "CPU_SIZES"}


def _cost_module(module: types.ModuleType, name: str) -> tuple[float, float] | None:
    c = derive_counts(LoadedProblem(name=name, module=module))
    if c.source != DERIVED:
        return None
    return c.op_bytes + c.min_bytes, c.flops


def _cost(source: str, name: str, sizes: dict[str, Any]) -> tuple[float, float] | None:
    """(traced bytes, FLOPs) of the reference with `sizes` overridden, None when the file or its
    reference fails at those sizes."""
    try:
        module = exec_module(source, name, sizes)
    except ProblemFileError:
        return None
    return _cost_module(module, name)


def _get(sizes: dict[str, Any], slot: Slot) -> int:
    name, i = slot
    return sizes[name] if i < 0 else sizes[name][i]


def _set(sizes: dict[str, Any], slot: Slot, value: int) -> None:
    name, i = slot
    if i < 0:
        sizes[name] = value
    else:
        v = list(sizes[name])
        v[i] = value
        sizes[name] = type(sizes[name])(v)


def auto_cpu_sizes(source: str, name: str = "problem") -> dict[str, Any]:
    """Reduced values of the file's free sizes (see module doc), only those that changed;
    {} when the file is small enough already, has no free sizes, or does not trace."""
    base = free_sizes(source)
    current: dict[str, Any] = dict(base)
    cost = _cost(source, name, {})
    if cost is None:
        return {}
    slots: list[Slot] = [(k, i) for k, v in base.items()
                         for i in ([-1] if isinstance(v, int) else
                                   [j for j, e in enumerate(v) if isinstance(e, int) and not isinstance(e, bool)])]
    frozen: set[Slot] = set()
    for _ in range(MAX_TRIALS):
        nbytes, flops = cost
        if nbytes <= MAX_BYTES and flops <= MAX_FLOPS:
            break
        movable = [s for s in slots if _get(current, s) > MIN_SIZE and s not in frozen]
        if not movable:
            break
        slot = max(movable, key=lambda s: _get(current, s))
        value = _get(current, slot)
        tied = [s for s in movable if _get(current, s) == value]
        # Far from the targets a size is quartered (fewer traces); near them, halved.
        step = 4 if nbytes > 16 * MAX_BYTES or flops > 16 * MAX_FLOPS else 2
        for group in ([slot], tied) if len(tied) > 1 else ([slot],):
            trial = dict(current)
            for s in group:
                _set(trial, s, max(MIN_SIZE, value // step))
            new = _cost(source, name, {k: v for k, v in trial.items() if v != base[k]})
            if new is not None:
                current, cost = trial, new
                break
        else:
            frozen.add(slot)
    return {k: v for k, v in current.items() if v != base[k]}


def cpu_footprint(module: types.ModuleType, name: str = "problem") -> tuple[float, float] | None:
    """(traced bytes, FLOPs) of the module at its current sizes; None when it does not trace."""
    return _cost_module(module, name)


def describe(sizes: dict[str, Any]) -> str:
    """`name=value` pairs, for reports."""
    return ", ".join(f"{k}={v}" for k, v in sorted(sizes.items())) or "(full size)"
