"""A problem file's module once imported (`LoadedProblem`), and the check of the counts it
declares. Below the loader and the CPU-size chooser, which both build one."""
from __future__ import annotations

import math
import types
from dataclasses import dataclass, field
from typing import Any

from workbench.errors import ProblemFileError


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
