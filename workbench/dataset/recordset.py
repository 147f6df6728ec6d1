"""Problems, candidates and measurements that belong together, as one value."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

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


def by_id(records: Iterable[Any]) -> dict[str, Any]:
    """Records keyed by their `id` (a later duplicate wins)."""
    return {r.id: r for r in records}
