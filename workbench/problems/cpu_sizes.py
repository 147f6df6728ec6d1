"""Reduced sizes for the CPU check, found automatically when a file has no `CPU_SIZES`.

The CPU executor runs the reference and Triton's interpreter on the CPU; a KernelBench file at
its full size can ask for gigabytes (a ReLU over 64 x 131072 floats four times over) and hours
of interpreted FLOPs. `auto_cpu_sizes(module)` picks smaller values for the file's size
globals (module-level ints, upper or lower case, above `MIN_SIZE`): it halves the largest
one, keeps the change when the reference still traces on the meta device (`counts`), and goes
on until the traced footprint and FLOPs are under `MAX_BYTES` and `MAX_FLOPS`. A size whose
halving breaks the reference (a divisibility, a fixed layer width) is left as it is. Values of
`MIN_SIZE` or less (kernel sizes, channel counts of 3, head counts) are never touched.

A file's own `CPU_SIZES` always wins: that is how a user overrides the choice. The footprint is
`op_bytes + min_bytes` from the trace (every tensor any op reads or writes, plus inputs,
outputs and parameters): an upper bound on what the reference allocates at once.
"""
from __future__ import annotations

import types
from typing import Any

from workbench.problems.counts import DERIVED, derive_counts
from workbench.problems.loaded import LoadedProblem

#: Targets for the reduced run (bytes traced, FLOPs traced) and the smallest size reduced.
MAX_BYTES = 8 * 2**20
MAX_FLOPS = 2e8
MIN_SIZE = 8
_MAX_STEPS = 64


def size_globals(module: types.ModuleType) -> dict[str, int]:
    """The module's integer globals that may be sizes (not private, not bools)."""
    return {k: v for k, v in vars(module).items()
            if not k.startswith("_") and isinstance(v, int) and not isinstance(v, bool)
            and k != "CPU_SIZES"}


def _cost(module: types.ModuleType, name: str, sizes: dict[str, int]) -> tuple[float, float] | None:
    """(traced bytes, FLOPs) of the reference with `sizes` set on `module`, None when it does not
    trace there. `module` is restored afterwards."""
    saved = {k: module.__dict__[k] for k in sizes}
    module.__dict__.update(sizes)
    try:
        c = derive_counts(LoadedProblem(name=name, module=module))
    finally:
        module.__dict__.update(saved)
    if c.source != DERIVED:
        return None
    return c.op_bytes + c.min_bytes, c.flops


def auto_cpu_sizes(module: types.ModuleType, name: str = "problem") -> dict[str, int]:
    """Reduced values of the module's size globals (see module doc); {} when the file is small
    enough already, has no size globals, or does not trace on the meta device."""
    base = size_globals(module)
    current = dict(base)
    cost = _cost(module, name, current)
    if cost is None:
        return {}
    frozen: set[str] = set()
    for _ in range(_MAX_STEPS):
        nbytes, flops = cost
        if nbytes <= MAX_BYTES and flops <= MAX_FLOPS:
            break
        movable = [k for k, v in current.items() if v > MIN_SIZE and k not in frozen]
        if not movable:
            break
        k = max(movable, key=lambda k: current[k])
        trial = dict(current)
        trial[k] = max(MIN_SIZE, current[k] // 2)
        new = _cost(module, name, trial)
        if new is None:
            frozen.add(k)
            continue
        current, cost = trial, new
    return {k: v for k, v in current.items() if v != base[k]}


def cpu_footprint(module: types.ModuleType, name: str = "problem") -> tuple[float, float] | None:
    """(traced bytes, FLOPs) of the module at its current sizes; None when it does not trace."""
    return _cost(module, name, {})


def describe(sizes: dict[str, Any]) -> str:
    """`name=value` pairs, for reports."""
    return ", ".join(f"{k}={v}" for k, v in sorted(sizes.items())) or "(full size)"
