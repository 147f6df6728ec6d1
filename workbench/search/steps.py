"""Bookkeeping of one search step: the events a repaired step already wrote, keyed by
(kind, key), and the measurements of one parent handed to the executor."""
from __future__ import annotations

from dataclasses import dataclass, field

from workbench.records import Candidate, Measurement


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
    """Events already written for the step being (re)run, keyed by (kind, key)."""

    step: int = -1
    events: dict[tuple[str, str], dict] = field(default_factory=dict)

    def get(self, kind: str, key: str = "") -> dict | None:
        return self.events.get((kind, key))

    def kinds(self) -> set[str]:
        return {k for k, _ in self.events}


def event_key(kind: str, payload: dict) -> str:
    if kind in ("selected", "measuring", "children_done"):
        return str(payload.get("slot", ""))
    if kind == "generated":
        return payload["candidate"]["id"]
    if kind == "forecast":
        return payload["forecast"]["candidate_id"]
    if kind == "measured":
        return payload["measurement"]["candidate_id"]
    if kind == "archived":
        return payload["entry"]["candidate_id"]
    if kind in ("trusted", "queued"):
        return payload["candidate_id"]
    if kind == "failed_generation":
        slot = payload.get("slot")
        return str(payload.get("index", "")) if slot is None else f"{slot}:{payload.get('index', '')}"
    return ""
