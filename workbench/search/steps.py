"""Bookkeeping of one search step: the events a repaired step already wrote, keyed by
(kind, key), and the measurements of one parent handed to the executor."""
from __future__ import annotations

from dataclasses import dataclass, field

from workbench.records import Candidate, Measurement
from workbench.search.events import Event


@dataclass
class Batch:
    """One parent's measurements handed to the executor and not yet collected."""

    queue: list[Candidate]
    parent: Candidate | None
    parent_ids: dict[str, str | None] | None
    reused: dict[str, Measurement]
    futures: list


@dataclass
class Partial:
    """Events already written for the step being (re)run, keyed by (kind, `Event.key()`)."""

    step: int = -1
    events: dict[tuple[str, str], Event] = field(default_factory=dict)

    def get(self, kind: str, key: str = "") -> Event | None:
        return self.events.get((kind, key))

    def kinds(self) -> set[str]:
        return {k for k, _ in self.events}
