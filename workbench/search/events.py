"""A search's event log as typed values: one frozen dataclass per event kind (see loop.py's
module doc for when each is written), `to_payload()` for the stored JSON and `decode` for
reading a stored event back.

The stored payload is exactly what the loop wrote before these types existed: the same keys
(optional ones left out when unset, as before) and the same values, so old databases decode
and replays reproduce byte for byte. `step` None means "the run's current step": the loop
fills it in when it writes the event. Every reader of the log (the loop on resume, the app,
the CLI, benchmarks) goes through `decode`; an event of a kind this version does not know
decodes to `UnknownEvent`, never to an error.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Mapping

from workbench.records import Candidate, Forecast, Measurement
from workbench.search.archive import Entry


@dataclass(frozen=True)
class Event:
    """Base of every event; `kind` is the stored kind, `step` the step it belongs to."""

    kind: ClassVar[str] = ""
    #: Fields left out of the payload when None (or False): keys the loop writes only sometimes.
    _optional: ClassVar[tuple[str, ...]] = ()

    step: int | None = None

    def at(self, step: int) -> Event:
        """This event with `step` set."""
        return dataclasses.replace(self, step=step)

    def key(self) -> str:
        """What tells two events of this kind in one step apart (see steps.Partial)."""
        return ""

    def to_payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name in self._optional and (v is None or v is False):
                continue
            out[f.name] = _encode(v)
        return out

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> Event:
        kw = {}
        for f in dataclasses.fields(cls):
            if f.name in payload:
                kw[f.name] = _DECODERS.get(f.name, _plain)(payload[f.name])
        return cls(**kw)


def _encode(v: Any) -> Any:
    if isinstance(v, (Candidate, Forecast, Measurement)):
        return v.to_dict()
    if isinstance(v, Entry):
        return v.to_payload()
    if isinstance(v, tuple):
        return list(v)
    return v


def _plain(v: Any) -> Any:
    return v


_DECODERS = {"candidate": Candidate.from_dict, "forecast": Forecast.from_dict,
             "measurement": Measurement.from_dict, "entry": Entry.from_payload,
             "candidate_ids": tuple}


@dataclass(frozen=True)
class Started(Event):
    kind: ClassVar[str] = "started"
    config: Mapping[str, Any] = field(default_factory=dict)
    #: The database's median reference time (ms) when the run started (None: none known).
    reference_ms: float | None = None


@dataclass(frozen=True)
class Resumed(Event):
    kind: ClassVar[str] = "resumed"
    at_seq: int = 0


@dataclass(frozen=True)
class Selected(Event):
    """A parent picked for expansion (None: the seeding step, or `deferred` measuring)."""

    kind: ClassVar[str] = "selected"
    _optional: ClassVar[tuple[str, ...]] = ("slot", "deferred")
    parent_id: str | None = None
    slot: int | None = None
    deferred: bool = False

    def key(self) -> str:
        return "" if self.slot is None else str(self.slot)


@dataclass(frozen=True)
class ChildrenDone(Event):
    kind: ClassVar[str] = "children_done"
    _optional: ClassVar[tuple[str, ...]] = ("slot",)
    parent_id: str | None = None
    slot: int | None = None

    def key(self) -> str:
        return "" if self.slot is None else str(self.slot)


@dataclass(frozen=True)
class Generated(Event):
    """A new candidate; `generation` is a model-written child's raw answer, model, tokens and
    seconds (Generator.generation_info), None for other generators."""

    kind: ClassVar[str] = "generated"
    _optional: ClassVar[tuple[str, ...]] = ("slot", "generation")
    candidate: Candidate | None = None
    parent_id: str | None = None
    slot: int | None = None
    generation: Mapping[str, Any] | None = None

    def key(self) -> str:
        return self.candidate.id


@dataclass(frozen=True)
class FailedGenerationEvent(Event):
    kind: ClassVar[str] = "failed_generation"
    _optional: ClassVar[tuple[str, ...]] = ("slot",)
    index: int = 0
    parent_id: str | None = None
    slot: int | None = None
    reason: str = ""
    raw: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def key(self) -> str:
        return str(self.index) if self.slot is None else f"{self.slot}:{self.index}"


@dataclass(frozen=True)
class Forecasted(Event):
    kind: ClassVar[str] = "forecast"
    forecast: Forecast | None = None

    def key(self) -> str:
        return self.forecast.candidate_id


@dataclass(frozen=True)
class Trusted(Event):
    kind: ClassVar[str] = "trusted"
    candidate_id: str = ""
    expected_speedup: float | None = None

    def key(self) -> str:
        return self.candidate_id


@dataclass(frozen=True)
class Queued(Event):
    kind: ClassVar[str] = "queued"
    candidate_id: str = ""
    rank: int = 0
    parent_id: str | None = None

    def key(self) -> str:
        return self.candidate_id


@dataclass(frozen=True)
class Measuring(Event):
    """Candidates handed to the executor (written right before they go)."""

    kind: ClassVar[str] = "measuring"
    _optional: ClassVar[tuple[str, ...]] = ("slot",)
    candidate_ids: tuple[str, ...] = ()
    slot: int | None = None

    def key(self) -> str:
        return "" if self.slot is None else str(self.slot)


@dataclass(frozen=True)
class Measured(Event):
    kind: ClassVar[str] = "measured"
    measurement: Measurement | None = None

    def key(self) -> str:
        return self.measurement.candidate_id


@dataclass(frozen=True)
class Archived(Event):
    kind: ClassVar[str] = "archived"
    entry: Entry | None = None

    def key(self) -> str:
        return self.entry.candidate_id


@dataclass(frozen=True)
class Unmeasurable(Event):
    """A candidate the method chose to measure that the executor cannot measure (a replay has no
    recording of it): no measurement exists, none is stored, no budget is used."""

    kind: ClassVar[str] = "unmeasurable"
    candidate_id: str = ""
    reason: str = ""

    def key(self) -> str:
        return self.candidate_id


@dataclass(frozen=True)
class StepDone(Event):
    """`in_flight`: candidates still with the executor (pipelined runs only).
    `unmeasurable_steps`: consecutive steps, this one included, whose planned measurements were
    all unmeasurable (left out when 0)."""

    kind: ClassVar[str] = "step_done"
    _optional: ClassVar[tuple[str, ...]] = ("in_flight", "unmeasurable_steps")
    gpu_measurements: int = 0
    considered: int = 0
    idle_steps: int = 0
    in_flight: int | None = None
    unmeasurable_steps: int | None = None


@dataclass(frozen=True)
class Stopped(Event):
    kind: ClassVar[str] = "stopped"
    summary: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Finished(Event):
    kind: ClassVar[str] = "finished"
    reason: str = ""
    summary: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class UnknownEvent(Event):
    """An event of a kind this version does not write; its payload is kept as stored."""

    stored_kind: str = ""
    payload: Mapping[str, Any] = field(default_factory=dict)

    def to_payload(self) -> dict[str, Any]:
        return dict(self.payload)


KINDS: dict[str, type[Event]] = {c.kind: c for c in (
    Started, Resumed, Selected, ChildrenDone, Generated, FailedGenerationEvent, Forecasted, Trusted,
    Queued, Measuring, Measured, Unmeasurable, Archived, StepDone, Stopped, Finished)}


def decode(event: Mapping[str, Any] | Event) -> Event:
    """A stored event (a dict with "kind" and "payload", as `Store.events` returns) as its
    typed form; an event already typed is returned as it is."""
    if isinstance(event, Event):
        return event
    kind, payload = event["kind"], event["payload"]
    cls = KINDS.get(kind)
    if cls is None:
        return UnknownEvent(step=payload.get("step"), stored_kind=kind, payload=dict(payload))
    return cls.from_payload(payload)


def decode_all(events: Iterable[Mapping[str, Any] | Event]) -> list[Event]:
    return [decode(e) for e in events]
