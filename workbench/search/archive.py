"""The search archive: every kernel a search has judged, with lineage.

An entry is either *measured* (a GPU measurement exists; `status` says how it went) or
*trusted* (a confident forecast stood in for a measurement; `speedup` is then the forecast's
expected speedup, 2 ** E[log2 S], and never counts as a measured result). Speedups are over the
problem's PyTorch reference. The archive is rebuilt exactly from a search's `archived` and
`selected` events (`Archive.from_events`), which is how a run is resumed or watched.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Iterator, Mapping

MEASURED = "measured"
TRUSTED = "trusted"


@dataclass
class Entry:
    """One archived kernel. `visits` = times it was picked as a parent; `island` its island."""

    candidate_id: str
    parent_id: str | None
    generation: int
    origin: str
    kind: str                 # MEASURED | TRUSTED
    status: str               # a records.Status value for measured entries; "trusted" otherwise
    speedup: float | None     # measured speedup, or the forecast's expected speedup when trusted
    step: int = 0
    island: int = 0
    visits: int = 0
    children: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """Can be a parent and carries a value: a correct measurement or a trusted forecast."""
        ok = self.kind == TRUSTED or self.status == "ok"
        return ok and self.speedup is not None and self.speedup > 0 and math.isfinite(self.speedup)

    @property
    def measured_ok(self) -> bool:
        return self.kind == MEASURED and self.status == "ok" and self.speedup is not None

    def to_payload(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("visits")
        d.pop("children")
        return d

    @classmethod
    def from_payload(cls, d: Mapping[str, Any]) -> "Entry":
        names = set(cls.__dataclass_fields__) - {"visits", "children"}
        return cls(**{k: v for k, v in d.items() if k in names})


class Archive:
    """Entries in insertion order, with parent -> children links and visit counts."""

    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}

    # ------------------------------------------------------------------ building
    def add(self, entry: Entry) -> Entry:
        """Add an entry. A second add of the same id is ignored and returns the first, except
        that a measured entry replaces a trusted one (a deferred candidate measured later),
        keeping its place, visits and children."""
        old = self._entries.get(entry.candidate_id)
        if old is not None:
            if old.kind == TRUSTED and entry.kind == MEASURED:
                entry.visits, entry.children = old.visits, old.children
                self._entries[entry.candidate_id] = entry
                return entry
            return old
        self._entries[entry.candidate_id] = entry
        parent = self._entries.get(entry.parent_id or "")
        if parent is not None:
            parent.children.append(entry.candidate_id)
        return entry

    def visit(self, candidate_id: str) -> None:
        """Count one expansion of `candidate_id` (it was selected as a parent)."""
        self._entries[candidate_id].visits += 1

    @classmethod
    def from_events(cls, events: Iterable[Any]) -> "Archive":
        """Rebuild from a search's typed events (`events.decode_all(store.events(id))`), in order."""
        a = cls()
        for ev in events:
            a.apply(ev)
        return a

    def apply(self, event: Any) -> None:
        """Apply one typed event (`workbench.search.events`); kinds other than `archived` and
        `selected` are ignored. An archived entry is copied: the archive counts visits and
        children on its own entries."""
        if event.kind == "archived":
            self.add(Entry.from_payload(event.entry.to_payload()))
        elif event.kind == "selected" and event.parent_id:
            self.visit(event.parent_id)

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, candidate_id: object) -> bool:
        return candidate_id in self._entries

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries.values())

    def __getitem__(self, candidate_id: str) -> Entry:
        return self._entries[candidate_id]

    def get(self, candidate_id: str | None) -> Entry | None:
        return self._entries.get(candidate_id or "")

    def usable(self) -> list[Entry]:
        return [e for e in self._entries.values() if e.usable]

    def best_measured(self) -> Entry | None:
        """The fastest correct measured entry (first one on ties), or None."""
        best = None
        for e in self._entries.values():
            if e.measured_ok and (best is None or e.speedup > best.speedup):  # type: ignore[operator]
                best = e
        return best

    def subtree(self, candidate_id: str) -> Iterator[Entry]:
        """The entry and all its descendants in the archive (depth-first)."""
        stack = [candidate_id]
        while stack:
            e = self._entries.get(stack.pop())
            if e is None:
                continue
            yield e
            stack.extend(reversed(e.children))

    def subtree_best_log2(self, candidate_id: str) -> float | None:
        """max log2 speedup over usable entries in the subtree, None when none is usable."""
        vals = [math.log2(e.speedup) for e in self.subtree(candidate_id) if e.usable]  # type: ignore[arg-type]
        return max(vals) if vals else None

    def total_visits(self) -> int:
        return sum(e.visits for e in self._entries.values())

    def signature(self) -> list[tuple]:
        """A comparable summary (id, parent, kind, status, speedup, visits) in insertion order,
        used to check that two runs ended with the same archive."""
        return [(e.candidate_id, e.parent_id, e.kind, e.status,
                 None if e.speedup is None else round(e.speedup, 12), e.visits)
                for e in self._entries.values()]
