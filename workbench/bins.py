"""The one definition of the speedup bins.

Speedup S = reference_time / candidate_time (S > 1 means the candidate is faster).
Eight bins, split at the edges 0.25, 0.5, 0.71, 1.0, 1.41, 2, 4. Intervals are closed on
the right: bin 1 is S <= 0.25, bin 2 is 0.25 < S <= 0.5, ..., bin 8 is S > 4. So a speedup
of exactly 1.0 is in bin 4 ("not faster"). Bins are numbered 1..8 in prompts and reports;
arrays of probabilities are indexed 0..7 (`index = number - 1`). Every label, prompt,
metric and importer derives from this module; imported labels are recomputed from the
measured speedup with `bin_of`.
"""
from __future__ import annotations

import bisect
import math
from typing import Sequence

EDGES: tuple[float, ...] = (0.25, 0.5, 0.71, 1.0, 1.41, 2.0, 4.0)
N_BINS: int = len(EDGES) + 1

# Outer bins are open; for a representative value we treat them as one octave wide.
_LOWER = (EDGES[0] / 2,) + EDGES
_UPPER = EDGES + (EDGES[-1] * 2,)

#: Geometric midpoint of each bin (speedup units), index 0..7.
MIDPOINTS: tuple[float, ...] = tuple(math.sqrt(lo * hi) for lo, hi in zip(_LOWER, _UPPER))
#: log2 of the midpoints: the value an expected log-speedup is built from.
LOG2_MIDPOINTS: tuple[float, ...] = tuple(math.log2(m) for m in MIDPOINTS)


def _fmt(x: float) -> str:
    return f"{x:g}"


#: Human labels, index 0..7, e.g. "<=0.25x", "0.25-0.5x", ..., ">4x".
LABELS: tuple[str, ...] = (
    (f"<={_fmt(EDGES[0])}x",)
    + tuple(f"{_fmt(a)}-{_fmt(b)}x" for a, b in zip(EDGES[:-1], EDGES[1:]))
    + (f">{_fmt(EDGES[-1])}x",)
)


def bin_of(speedup: float) -> int:
    """Bin index (0..7) of a speedup. Raises ValueError for a non-finite or non-positive value."""
    s = float(speedup)
    if not math.isfinite(s) or s <= 0:
        raise ValueError(f"speedup must be a positive finite number, got {speedup!r}")
    return bisect.bisect_left(EDGES, s)


#: Bin conventions for labels: "prompt-table" (`EDGES`, the table the study's prompts show and
#: this project's default) and "study-code" (floor(2 log2 S) + 4 clamped to 1..8, the formula
#: the study's released code stored its labels with; one bin lower for most speedups).
CONVENTIONS: tuple[str, ...] = ("prompt-table", "study-code")
DEFAULT_CONVENTION = "prompt-table"


def bin_of_convention(speedup: float, convention: str = DEFAULT_CONVENTION) -> int:
    """Bin index (0..7) of a speedup under a label convention (see `CONVENTIONS`). Raises
    ValueError for a non-finite or non-positive speedup or an unknown convention."""
    if convention == "prompt-table":
        return bin_of(speedup)
    if convention == "study-code":
        s = float(speedup)
        if not math.isfinite(s) or s <= 0:
            raise ValueError(f"speedup must be a positive finite number, got {speedup!r}")
        return min(max(math.floor(2.0 * math.log2(s)) + 4, 1), N_BINS) - 1
    raise ValueError(f"unknown bin convention {convention!r}; use one of {', '.join(CONVENTIONS)}")


def bin_number(speedup: float) -> int:
    """Bin number (1..8) of a speedup, as shown to models and users."""
    return bin_of(speedup) + 1


def label(index: int) -> str:
    """Label of bin `index` (0..7)."""
    return LABELS[index]


def expected_log2_speedup(probabilities: Sequence[float]) -> float:
    """Expected log2-speedup under a distribution over the 8 bins (bin midpoints)."""
    if len(probabilities) != N_BINS:
        raise ValueError(f"expected {N_BINS} probabilities, got {len(probabilities)}")
    total = float(sum(probabilities))
    if total <= 0:
        raise ValueError("probabilities sum to zero")
    return sum(p * m for p, m in zip(probabilities, LOG2_MIDPOINTS)) / total


def table() -> str:
    """The bin table as shown in prompts: one line per bin, numbered 1..8."""
    return "\n".join(f"{i + 1}: {LABELS[i]}" for i in range(N_BINS))
