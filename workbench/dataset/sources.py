"""One way to turn "a store or some records" into three lists of records.

Every function in `workbench.dataset` that reads data accepts any `DataSource`:
- a `workbench.store.Store` (everything in it),
- a `RecordSet` or a `(problems, candidates, measurements)` tuple of record iterables,
- a directory holding the shipped layout (see SCHEMA.md beside this file).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Union

from workbench.records import Candidate, Measurement, Problem


@dataclass
class RecordSet:
    """Problems, candidates and measurements that belong together (plain lists, any order)."""

    problems: list[Problem] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)

    def __iter__(self):  # lets `problems, candidates, measurements = record_set` work
        return iter((self.problems, self.candidates, self.measurements))

    def filter_hardware(self, hardware_key: str | None) -> "RecordSet":
        """The same records with only the measurements taken on `hardware_key` (None: all)."""
        if not hardware_key:
            return self
        return RecordSet(self.problems, self.candidates,
                         [m for m in self.measurements if m.hardware_key == hardware_key])


DataSource = Union["Store", RecordSet, tuple, str, Path]  # noqa: F821 - Store imported lazily


def collect(source: Any, hardware_key: str | None = None) -> RecordSet:
    """Read any `DataSource` into a `RecordSet`, optionally keeping one GPU's measurements."""
    from workbench.store import Store

    if isinstance(source, RecordSet):
        rs = source
    elif isinstance(source, Store):
        ms = source.measurements(hardware_key=hardware_key or None)
        rs = RecordSet(source.problems(), source.candidates(), ms)
    elif isinstance(source, (str, Path)):
        from workbench.dataset.shipped import load_shipped

        rs = load_shipped(source)
    elif isinstance(source, tuple) and len(source) == 3:
        ps, cs, ms = source
        rs = RecordSet(list(ps), list(cs), list(ms))
    else:
        raise TypeError(f"expected a Store, a RecordSet, a (problems, candidates, measurements) "
                        f"tuple or a directory, got {type(source).__name__}")
    return rs.filter_hardware(hardware_key)


def by_id(records: Iterable[Any]) -> dict[str, Any]:
    """Records keyed by their `id` (a later duplicate wins)."""
    return {r.id: r for r in records}
