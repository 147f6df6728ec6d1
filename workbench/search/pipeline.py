"""Pipelined search: no step barrier; the executor is kept holding `pipeline` candidates.

`SearchRun(pipeline=N)` drives the run as a pipeline instead of in steps. Each tick:
1. records every measurement that has come back (in submission order);
2. while fewer than N candidates are with the executor and budget is unreserved, expands one
   more parent: selects it (PUCT over the current archive), generates, forecasts and plans its
   children and hands the ones to measure to the executor at once; results that came back in
   the meantime are recorded before the next selection;
3. waits for the next measurement to come back.
So generation and forecasting of the next children overlap the measurement of the ones in
flight, and a slow kernel holds only its own slot, never every worker.

Expansions are numbered like steps (0 seeds, then one parent each, or one batch of deferred
trusted candidates once the generator has run dry); an expansion's events are contiguous in the
log and end with `step_done` (written once its children are with the executor). A `measured` /
`archived` pair is written when the result is recorded, carrying the `step` of the expansion
that queued the candidate; `queued` carries its `parent_id`.

Budget: every queued candidate holds a reserved slot until its measurement is recorded, and a
plan sees only the unreserved budget, so `measured` events never exceed the budget.

Determinism: an expansion draws from `random.Random(f"{seed}:{step}")` and depends only on the
events written before it, so the event log (which records which results had arrived at each
selection) reproduces every decision. With an executor whose futures are resolved when `submit`
returns (the replay executor) arrival is itself fixed, so two runs with the same settings write
the same events.

Resume: the state is rebuilt from the events. An expansion cut short by a crash (its
`selected` written, its `step_done` not) is re-run, reusing its written events; candidates it
had handed over and those of earlier expansions still unrecorded are recorded from their stored
measurement, or as `crashed` when the executor had not returned one: none is measured again.
A stopped pipelined run first waits for the candidates in flight and records them.
"""
from __future__ import annotations

import random
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from typing import Any

from workbench.errors import ConfigError
from workbench.records import Candidate, Measurement, Status
from workbench.search.archive import MEASURED
from workbench.search import events as ev
from workbench.search.steps import Partial as _Partial

#: Events that belong to no expansion (never reused when an expansion is repaired).
_RUN_KINDS = ("resumed", "stopped", "started", "finished")


@dataclass
class _InFlight:
    """A queued candidate whose measurement is not recorded yet."""

    candidate: Candidate
    parent_id: str | None
    step: int
    future: Future | None = None
    ready: Measurement | None = None     # known without the executor (stored, or crashed)
    measured_written: bool = False       # its `measured` event exists, its `archived` does not


def parse_in_flight(value: Any) -> int | str:
    """A user's in-flight setting: an int P >= 1 (P parents per step), "auto" (pipelined, as
    many candidates as the executor measures at once) or "auto:N" (pipelined, N candidates)."""
    text = str(value).strip().lower()
    if text == "auto":
        return "auto"
    if text.startswith("auto:"):
        n = text[5:]
        if n.isdigit() and int(n) >= 1:
            return f"auto:{int(n)}"
    elif text.isdigit() and int(text) >= 1:
        return int(text)
    raise ConfigError(f"in-flight setting {value!r}: give a number of parents per step (1, 2, ...), "
                      "'auto' (keep the executor's workers busy) or 'auto:N' (keep N candidates in flight)")


def in_flight_setting(value: Any, executor) -> dict[str, int]:
    """SearchRun keyword arguments for a user's in-flight setting (see `parse_in_flight`):
    {"in_flight": P, "pipeline": 0} for step mode, {"in_flight": 1, "pipeline": N} pipelined;
    "auto" reads N from `executor.capacity` (1 when the executor does not say)."""
    v = parse_in_flight(1 if value is None else value)
    if isinstance(v, int):
        return {"in_flight": v, "pipeline": 0}
    n = int(v[5:]) if ":" in v else int(getattr(executor, "capacity", 1) or 1)
    return {"in_flight": 1, "pipeline": max(1, n)}


class PipelineMixin:
    """The pipelined driver of SearchRun (see the module doc). Uses SearchRun's event helpers."""

    # ------------------------------------------------------------------ driving
    def _pipeline_step(self) -> bool:
        """One tick: record what came back, then expand one parent if fewer than `pipeline`
        candidates are in flight, else (or when none can be expanded) wait for a result. False
        when the run is over (finished, or stopped with nothing left in flight)."""
        if self.search_id is None:
            self.start()
        if self.finished:
            return False
        if self._partial.step != self.step_index:  # a cut expansion is repaired before anything is recorded
            self._record_arrived(block=False)
        why = ""
        if not self._stop.is_set() and len(self._flight) < self.pipeline:
            why = self._expand_next()
            self._partial = _Partial()  # a repaired expansion is complete: nothing more to reuse
            if not why:
                return True
        if self.budget_left <= 0:
            return self._finish("budget spent")
        if not self._flight:
            if self._stop.is_set():
                summary = self.summary()
                self._write(ev.Stopped(step=self.step_index, summary=summary))
                self.store.set_search_state(self.search_id, "stopped", summary=summary)
                return False
            return self._finish(why or "exhausted: the generator proposes no new candidates")
        self._record_arrived(block=True)
        if self.budget_left <= 0:
            return self._finish("budget spent")
        return True

    def _expand_next(self) -> str:
        """Expand one parent (or seed, or measure deferred candidates); "" when done, else why
        nothing can be expanded now (the run ends for that reason once nothing is in flight)."""
        if self.unreserved <= 0:
            return "budget spent"
        if self.step_index > self.max_steps:
            return "max_steps reached"
        rng = random.Random(f"{self.seed}:{self.step_index}")
        self._step_new = []
        self._step_unmeasurable = self._step_submitted = 0
        if self.step_index == 0:
            self._emit(ev.Selected(parent_id=None))
            proposals = self._reuse_or(self._seed_proposals)
            new = self._record_generated(proposals, parent=None)
            self._emit(ev.ChildrenDone(parent_id=None))
            self._forecast(new)
            self._hand_over(new, parent=None)
        elif self.idle_steps >= self.max_idle:
            deferred = [e for e in self._deferred() if e.candidate_id not in self._flight]
            if not deferred:
                return "exhausted: the generator proposes no new candidates"
            self._emit(ev.Selected(parent_id=None, deferred=True))
            queue = deferred[: self.unreserved]
            self._hand_over([self.candidates[e.candidate_id] for e in queue], parent=None,
                            parent_ids={e.candidate_id: e.parent_id for e in queue})
            return self._end_expansion(idle=self.idle_steps)
        else:
            parent_id = self.selector.select(self.archive, rng, self.step_index)
            if parent_id is None:
                return "no usable parent: every archived kernel failed"
            parent_id = self._emit(ev.Selected(parent_id=parent_id)).parent_id
            self._expand_parent(parent_id, rng)
        return self._end_expansion(idle=0 if self._step_new else self.idle_steps + 1)

    def _expand_parent(self, parent_id: str, rng: random.Random) -> None:
        queue = self._plan_children(parent_id, rng, None, children_done=True)
        self._hand_over(queue, self.candidates[parent_id])

    def _end_expansion(self, idle: int) -> str:
        """Write the expansion's `step_done`; "" to go on, or why the run must end (it proposed
        only unmeasurable kernels `max_unmeasurable` times in a row)."""
        self.idle_steps = idle
        streak = self._unmeasurable_streak()
        self._emit(ev.StepDone(gpu_measurements=self.used, considered=self.considered, idle_steps=idle,
                               in_flight=len(self._flight), unmeasurable_steps=streak or None))
        return self._unmeasurable_end() if self.unmeasurable_steps >= self.max_unmeasurable else ""

    def _hand_over(self, queue: list[Candidate], parent: Candidate | None,
                   parent_ids: dict[str, str | None] | None = None) -> None:
        """Queue (cut to the unreserved budget) and submit without waiting; each candidate stays
        in `_flight` (holding its reserved budget) until its measurement is recorded."""
        batch = self._submit(queue, parent, parent_ids)
        futures = iter(batch.futures)
        for c in batch.queue:
            pid = parent_ids[c.id] if parent_ids is not None else (parent.id if parent else None)
            item = _InFlight(c, pid, self.step_index)
            if c.id in batch.reused:
                item.ready = batch.reused[c.id]
            else:
                item.future = next(futures)
            self._flight[c.id] = item

    # ------------------------------------------------------------------ results
    def _record_arrived(self, block: bool) -> None:
        """Record (measured + archived events) every in-flight candidate whose measurement is
        known, in submission order; with `block`, first wait until at least one is."""
        if block and self._flight and not any(self._known(i) for i in self._flight.values()):
            wait([i.future for i in self._flight.values() if i.future is not None], return_when=FIRST_COMPLETED)
        for cid, item in list(self._flight.items()):
            if not self._known(item):
                continue
            del self._flight[cid]
            if not item.measured_written:
                self._reserved -= 1
            m = self.measurements[cid] if item.measured_written else item.ready or self._result(item)
            if not item.measured_written:
                self._emit(ev.Measured(step=item.step, measurement=m))
            self._archive(item.candidate, kind=MEASURED, status=m.status.value,
                          speedup=m.speedup if m.ok else None, parent_id=item.parent_id, step=item.step)

    @staticmethod
    def _known(item: _InFlight) -> bool:
        return item.measured_written or item.ready is not None or (item.future is not None and item.future.done())

    def _result(self, item: _InFlight) -> Measurement:
        """The future's measurement; a cancelled or failed future (an executor closed under the
        run, an executor bug) is recorded as crashed with the reason, never raised."""
        fut, c = item.future, item.candidate
        why = ("the executor was closed before measuring it" if fut.cancelled()
               else f"executor error: {type(fut.exception()).__name__}: {fut.exception()}"
               if fut.exception() is not None else "")
        if not why:
            return fut.result()
        m = Measurement(candidate_id=c.id, problem_id=self.problem.id, hardware_key=self.hardware.key,
                        hardware_fingerprint=self.hardware.fingerprint, status=Status.CRASHED, reason=why)
        self.store.put_measurement(m)
        return m

    def _drain_on_exit(self) -> None:
        """Wait for and record everything in flight (a stop, or the end of `run`)."""
        while self._flight:
            self._record_arrived(block=True)

    # ------------------------------------------------------------------ resume
    def _resume_pipeline(self, events: list[ev.Event]) -> None:
        """Rebuild state from a pipelined run's events (see the module doc)."""
        done = {e.step for e in events if isinstance(e, ev.StepDone)}
        cut = next((e.step for e in reversed(events) if isinstance(e, ev.Selected)), None)
        cut = cut if cut is not None and cut not in done else None
        partial: list[ev.Event] = []
        for e in events:
            if e.kind in _RUN_KINDS:
                if isinstance(e, ev.Finished):
                    self._apply(e)
            elif cut is not None and e.step == cut:
                partial.append(e)
            else:
                self._apply(e)
        if cut is not None:
            self.step_index = cut
            self._partial = _Partial(cut, {(e.kind, e.key()): e for e in partial})
        for e in events:  # queued candidates of completed expansions not yet recorded
            if not isinstance(e, ev.Queued) or e.step == cut or e.candidate_id in self._flight:
                continue
            cid = e.candidate_id
            entry = self.archive.get(cid)
            if entry is not None and entry.kind == MEASURED:
                continue
            c = self.candidates[cid]
            pid = e.parent_id if e.parent_id is not None else (entry.parent_id if entry else None)
            item = _InFlight(c, pid, e.step)
            if cid in self.measurements:
                item.measured_written = True
            else:
                item.ready = self._stored_or_poisoned(c)
                self._reserved += 1
            self._flight[cid] = item
