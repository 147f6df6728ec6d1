"""torch.compile baselines: what `torch.compile` gives for free on each problem and GPU type.

The shipped data holds one JSON-lines file per GPU type, `compile-<gpu>.jsonl` beside the
Parquet files (schema: SCHEMA.md). Each row times one problem's reference in eager PyTorch and
compiled with `torch.compile` (written by `workbench.execution.compile_baseline`):

    from workbench.dataset.baselines import load_compile_baselines, speedup_over_compile
    baselines = load_compile_baselines()          # {(problem_id, hardware_key): CompileBaseline}
    b = baselines.get((m.problem_id, m.hardware_key))
    if b is not None and m.ok:
        over_compile = speedup_over_compile(m.speedup, b)

Rows that carry an `error` key (the compile or the timing failed) are skipped; when a problem
appears more than once on a GPU type, the row with the newest `measured_at` is kept.
"""
from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from workbench.dataset.errors import DatasetError
from workbench.dataset.shipped import DEFAULT_SHIPPED_DIR

#: File names of the baselines in a shipped directory (one file per GPU type).
BASELINE_GLOB = "compile-*.jsonl"

_STRING_FIELDS = ("problem_id", "mode", "hardware_key", "hardware_fingerprint", "measured_at")
_POSITIVE_FIELDS = ("eager_ms", "compiled_ms", "speedup_over_eager")
_NUMBER_FIELDS = ("compile_s", "eager_cv_pct", "compiled_cv_pct")


@dataclass(frozen=True)
class CompileBaseline:
    """One problem's reference timed eager and under `torch.compile` on one GPU type.

    Times are medians in milliseconds; `speedup_over_eager` = eager_ms / compiled_ms;
    `compile_s` is the wall time in seconds of the first compiled call; the `_cv_pct` fields
    are the coefficients of variation of the timed runs, in percent; `measured_at` is an
    ISO-8601 UTC date.
    """

    problem_id: str
    mode: str
    eager_ms: float
    compiled_ms: float
    speedup_over_eager: float
    compile_s: float
    eager_cv_pct: float
    compiled_cv_pct: float
    hardware_key: str
    hardware_fingerprint: str
    measured_at: str


def speedup_over_compile(speedup: float, baseline: CompileBaseline) -> float:
    """A candidate's speedup over what torch.compile gives for free on the same problem and GPU.

    `speedup` is the candidate's measured speedup over the eager PyTorch reference
    (`Measurement.speedup` = reference_ms / candidate_ms, the reference timed eager in the same
    measurement). Dividing it by the baseline's `speedup_over_eager` gives the candidate's
    speedup over the compiled reference: above 1 the candidate beats torch.compile, below 1
    torch.compile is faster. The two eager timings come from different runs (same GPU type,
    same timer), so the ratio carries both runs' noise.
    """
    return speedup / baseline.speedup_over_eager


def over_compile(baselines: Mapping[tuple[str, str], CompileBaseline], problem_id: str,
                 hardware_key: str, speedup: float | None) -> float | None:
    """`speedup_over_compile` of a correct measurement's speedup, looked up in `baselines` by
    (problem_id, hardware_key); None when there is no speedup (not measured, or failed) or no
    baseline for that problem on that GPU type."""
    b = baselines.get((problem_id, hardware_key))
    return speedup_over_compile(speedup, b) if speedup and b is not None else None


def _parse_date(value: str) -> datetime:
    """An ISO-8601 date; one without a zone is taken as UTC (so any two compare)."""
    d = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return d if d.tzinfo is not None else d.replace(tzinfo=timezone.utc)


def _baseline(row: Any) -> CompileBaseline:
    """The CompileBaseline of one parsed row; ValueError says what is wrong with it."""
    if not isinstance(row, dict):
        raise ValueError(f"expected a JSON object, got {type(row).__name__}")
    missing = [k for k in _STRING_FIELDS + _POSITIVE_FIELDS + _NUMBER_FIELDS if k not in row]
    if missing:
        raise ValueError(f"missing field(s) {', '.join(missing)}")
    fields: dict[str, Any] = {}
    for k in _STRING_FIELDS:
        if not isinstance(row[k], str) or not row[k]:
            raise ValueError(f"{k} must be a non-empty string, got {row[k]!r}")
        fields[k] = row[k]
    for k in _POSITIVE_FIELDS + _NUMBER_FIELDS:
        v = row[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{k} must be a finite number, got {v!r}")
        if k in _POSITIVE_FIELDS and v <= 0:
            raise ValueError(f"{k} must be positive, got {v!r}")
        fields[k] = float(v)
    try:
        _parse_date(fields["measured_at"])
    except ValueError:
        raise ValueError(f"measured_at is not an ISO-8601 date: {fields['measured_at']!r}") from None
    return CompileBaseline(**fields)


def load_compile_baselines(directory: Path | str = DEFAULT_SHIPPED_DIR
                           ) -> dict[tuple[str, str], CompileBaseline]:
    """Every torch.compile baseline in `directory`'s `compile-*.jsonl` files, keyed by
    (problem_id, hardware_key).

    Blank lines and rows with an `error` key are skipped; of several rows for one key the newest
    `measured_at` is kept (the later line on a tie). A missing directory or one without baseline
    files gives {}. A line that is not a JSON object with every field raises DatasetError
    naming the file and line number.
    """
    directory = Path(directory)
    if not directory.is_dir():
        return {}
    kept: dict[tuple[str, str], CompileBaseline] = {}
    for path in sorted(directory.glob(BASELINE_GLOB)):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise DatasetError(f"{path}: cannot read the torch.compile baselines: {e}") from e
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise DatasetError(f"{path}, line {lineno}: invalid JSON: {e}") from e
            if isinstance(row, dict) and "error" in row:
                continue
            try:
                b = _baseline(row)
            except ValueError as e:
                raise DatasetError(f"{path}, line {lineno}: not a torch.compile baseline row: {e}") from e
            key = (b.problem_id, b.hardware_key)
            old = kept.get(key)
            if old is None or _parse_date(b.measured_at) >= _parse_date(old.measured_at):
                kept[key] = b
    return kept


@functools.lru_cache(maxsize=1)
def shipped_compile_baselines() -> Mapping[tuple[str, str], CompileBaseline]:
    """The baselines of the shipped directory, read on the first call and kept (read-only)."""
    return MappingProxyType(load_compile_baselines(DEFAULT_SHIPPED_DIR))
