"""The search run loop: select a parent, generate, forecast, decide, measure, archive.

Every event is persisted with `store.add_event` as it happens, so a run can be watched live
from another thread or process (poll `store.events(search_id, after_seq)`), stopped, resumed
after a crash with nothing lost, and replayed deterministically.

Event kinds and payloads (all carry "step"; typed as `workbench.search.events`, one class per
kind, which every reader decodes through `events.decode`):
  started / resumed   {"config"} / {"at_seq"}
  selected            {"parent_id", "slot"}       (None for step 0, the seeding step; "slot" = which
                                                 of the step's in_flight parents, only when > 1)
  children_done       {"parent_id", "slot"}       (in_flight > 1 or pipelined: generation is complete)
  generated           {"candidate": Candidate dict, "parent_id", "generation" (a model-written
                       child: its raw answer, model, tokens, seconds; see Generator.generation_info)}
  failed_generation   {"reason", "raw", tokens...}
  forecast            {"forecast": Forecast dict}
  trusted             {"candidate_id", "expected_speedup"}
  queued              {"candidate_id", "rank", "parent_id"}
  measuring           {"candidate_ids", "slot"}    (written right before they go to the executor)
  unmeasurable        {"candidate_id", "reason"}  (the executor cannot measure it: a replay holds no
                                                 recording of it; no measurement, no budget)
  measured            {"measurement": Measurement dict}   (pipelined: "step" = the expansion that
  archived            {"entry": archive Entry payload}    queued it, written when the result is back)
  step_done           {"gpu_measurements", "considered"}
  stopped / finished  {"reason", "summary"}

Revisiting: a generator whose `revisits` attribute is true (an enumerable space's) may propose
again a candidate the search generated earlier but neither measured nor trusted (a child a
method dropped); it is generated, forecast and planned again like a new one (so it counts again
in `candidates_considered`). Other generators' children are new candidates only.

Deferral: a trusted candidate is deferred, not discarded. When the generator has proposed
nothing new for `max_idle` steps in a row and budget is left, the next step (its "selected"
payload is {"parent_id": None, "deferred": true}) measures the trusted candidates still
unmeasured, highest expected speedup first, up to the budget; each is archived again as
measured (its trusted entry is replaced). The run then ends as exhausted when nothing trusted
is left, or as budget spent.

Determinism: step s draws from `random.Random(f"{seed}:{s}")` (with several parents in
flight, slot i of step s from `random.Random(f"{seed}:{s}:{i}")`), and a step depends only on the
state left by the steps before it, which is rebuilt from events. A crash inside a step is
repaired on resume by re-running that step: events it had already written are reused (not
written twice, not re-measured), the missing ones are written. Budget = number of `measured`
events; the loop never queues more than the budget has left.

Pipelined mode (`pipeline=N`, see pipeline.py): no step barrier; the executor is kept holding
N candidates, each expansion (one parent; its events end with `step_done`) is planned while
earlier children are measured, and `measured` / `archived` are written as results come back.

Unmeasurable candidates: an executor may say it cannot measure a candidate
(`executor.cannot_measure(candidate)` returns why; a replay of recorded measurements says so of
every kernel it has no recording of, e.g. one an LLM just wrote). Such a candidate is left out of
the measurements (after the method planned them, so the plan does not see what the recording
holds): an `unmeasurable` event is written instead, nothing is stored, no budget is used, and it
is never archived (so never a parent) nor measured later as a deferred trusted candidate. After
`max_unmeasurable` consecutive steps whose planned measurements were all unmeasurable the run
ends, instead of asking the generator for more of the same (unmeasurable.py).

Poison pills: each measurement is stored as soon as the executor returns it, and a
`measuring` event lists the candidates handed to the executor. A repaired step reuses the
stored measurements; a candidate that was with the executor when the run died and has none
is recorded as `crashed` ("the run ended while it was being measured") and never measured
again, so a candidate that kills its run cannot kill every resumed run after it.
"""
from __future__ import annotations

import math
import random
import statistics
import threading
from concurrent.futures import as_completed
from typing import Any, Callable, Iterable

from workbench.errors import ConfigError
from workbench.records import Candidate, Forecast, Measurement, Problem, RunEvidence, Status
from workbench.search.archive import MEASURED, TRUSTED, Archive, Entry
from workbench.search import events as ev
from workbench.search.steps import Batch as _Batch, Partial as _Partial
from workbench.search.generators import FailedGeneration, GenerationContext, Generator
from workbench.search.methods import Method, MethodContext
from workbench.search.pipeline import PipelineMixin
from workbench.search.unmeasurable import UnmeasurableMixin
from workbench.search.selection import PUCTSelector, Selector

_CONFIG_KEYS = ("problem_id", "method", "generator", "forecaster", "budget", "seed", "selector",
                "hardware_key", "max_seeds", "adapt_forecasts", "in_flight", "pipeline")
#: Stored value of a config key that searches written before the key existed lack.
_CONFIG_DEFAULTS = {"adapt_forecasts": False, "in_flight": 1, "pipeline": 0}
class SearchRun(PipelineMixin, UnmeasurableMixin):
    """One kernel search of `problem`, driven by `step()` (ask/tell inside) or `run()`.

    budget: GPU measurements allowed (seeds included). max_seeds: seeds measured at step 0.
    max_steps: parent expansions allowed (default 20 * budget) and max_idle: consecutive steps
    that produce no new child before the run ends as exhausted.

    spec: the `SearchSpec.to_dict()` this run was composed from (`workbench.compose`), stored in
    `config()`; compared on resume by `workbench.compose.resume`, not here.

    in_flight: parents expanded per step. With 1 (the default) a step selects one parent,
    generates and forecasts its children and waits for their measurements. With P > 1 a step
    selects P parents from the same state (PUCT counts each selection) and hands each parent's
    measurements to the executor as soon as they are planned, so the next parent's children are
    generated while the previous ones are measured; the step then waits for all of them (resume
    repairs a step as a unit). Each parent's queue is cut to the budget not yet handed over.

    pipeline: 0 (the default) runs in steps as above. N >= 1 runs pipelined (pipeline.py): no
    step barrier, N candidates kept with the executor (e.g. its `capacity`), a new parent
    expanded whenever fewer are in flight; needs in_flight=1. A pipelined search resumes
    pipelined (with any N), a stepped one stepped.
    """

    def __init__(self, store, problem: Problem, executor, generator: Generator, forecaster, method: Method,
                 budget: int, seed: int = 0, selector: Selector | None = None, max_seeds: int = 4,
                 max_steps: int | None = None, max_idle: int = 25, name: str = "",
                 adapt_forecasts: bool = True, in_flight: int = 1, pipeline: int = 0,
                 spec: dict[str, Any] | None = None, max_unmeasurable: int = 3):
        if budget < 1:
            raise ConfigError(f"budget must be at least 1 GPU measurement, got {budget}")
        if method.needs_forecaster and forecaster is None:
            raise ConfigError(f"method {method.name} needs a forecaster; pass --forecaster or use measure_all")
        self.store, self.problem, self.executor = store, problem, executor
        self.generator, self.forecaster, self.method = generator, forecaster, method
        self.budget, self.seed, self.max_seeds = int(budget), int(seed), int(max_seeds)
        self.selector = selector or PUCTSelector()
        self.max_steps = max_steps if max_steps is not None else 20 * self.budget
        self.max_idle = max_idle
        self.max_unmeasurable = int(max_unmeasurable)
        self.name = name
        self.adapt_forecasts = bool(adapt_forecasts)
        if int(in_flight) < 1:
            raise ConfigError(f"in_flight counts parents expanded at once and must be at least 1, got {in_flight}")
        self.in_flight = int(in_flight)
        if int(pipeline) < 0 or (int(pipeline) and self.in_flight != 1):
            raise ConfigError(f"pipeline={pipeline}: give the number of candidates to keep with the executor "
                              "(>= 1, or 0 for steps), and leave in_flight at 1 (a pipeline has no steps)")
        self.pipeline = int(pipeline)
        self.hardware = executor.hardware
        self.spec = dict(spec) if spec is not None else None  # stored with the search (compose.build)
        self.search_id: str | None = None
        self.prior_reference_ms: float | None = None
        self._stop = threading.Event()
        self._reset_state()

    # ------------------------------------------------------------------ state
    def _reset_state(self) -> None:
        self.archive = Archive()
        self.candidates: dict[str, Candidate] = {}
        self.forecasts: dict[str, Forecast] = {}
        self.measurements: dict[str, Measurement] = {}
        self.history: list[tuple[Forecast, Measurement]] = []
        self.step_index = 0
        self.used = 0
        self.considered = 0
        self.trusted = 0
        self.failed_generations = 0
        self.idle_steps = 0
        self.unmeasurable: set[str] = set()  # candidate ids the executor cannot measure
        self.unmeasurable_steps = 0
        self._step_unmeasurable = self._step_submitted = 0
        self.finished = False
        self.finish_reason = ""
        self._partial = _Partial()
        self._step_new: list[Candidate] = []
        self._reserved = 0  # measurements handed to the executor in this step, not yet recorded
        self._flight: dict = {}  # pipelined: candidate id -> pipeline._InFlight, in submission order
        self.on_event: Callable[[ev.Event], None] | None = None

    def config(self) -> dict[str, Any]:
        return {"problem_id": self.problem.id, "method": self.method.describe(), "generator": self.generator.name,
                "forecaster": getattr(self.forecaster, "name", None), "budget": self.budget, "seed": self.seed,
                "selector": self.selector.describe(), "hardware_key": self.hardware.key,
                "max_seeds": self.max_seeds, "name": self.name, "adapt_forecasts": self.adapt_forecasts,
                "in_flight": self.in_flight, "pipeline": self.pipeline,
                **({"spec": self.spec} if self.spec is not None else {})}

    @property
    def budget_left(self) -> int:
        return self.budget - self.used

    @property
    def unreserved(self) -> int:
        """Budget left that no measurement handed to the executor (and not yet recorded) claims."""
        return self.budget - self.used - self._reserved

    # ------------------------------------------------------------------ events
    def _emit(self, event: ev.Event) -> ev.Event:
        """Write an event (at the current step unless it names one) unless the step being
        repaired already wrote it; return the event written or reused."""
        if event.step is None:
            event = event.at(self.step_index)
        prior = self._partial.get(event.kind, event.key()) if self._partial.step == self.step_index else None
        if prior is not None:
            event = prior
        else:
            self.store.add_event(self.search_id, event.kind, event.to_payload())
        self._apply(event)
        if self.on_event:
            self.on_event(event)
        return event

    def _apply(self, e: ev.Event) -> None:
        """Update in-memory state from one event (used live and when resuming)."""
        self.archive.apply(e)
        if isinstance(e, ev.Generated):
            self.candidates[e.candidate.id] = e.candidate
            self.considered += 1
        elif isinstance(e, ev.FailedGenerationEvent):
            self.failed_generations += 1
        elif isinstance(e, ev.Forecasted):
            self.forecasts[e.forecast.candidate_id] = e.forecast
        elif isinstance(e, ev.Trusted):
            self.trusted += 1
        elif isinstance(e, ev.Measured):
            m = e.measurement
            self.measurements[m.candidate_id] = m
            self.used += 1
            f = self.forecasts.get(m.candidate_id)
            if f is not None and m.ok and m.speedup:
                self.history.append((f, m))
        elif isinstance(e, ev.Unmeasurable):
            self.unmeasurable.add(e.candidate_id)
        elif isinstance(e, ev.StepDone):
            self.step_index = e.step + 1
            self.idle_steps = e.idle_steps
            self.unmeasurable_steps = e.unmeasurable_steps or 0
        elif isinstance(e, ev.Finished):
            self.finished = True
            self.finish_reason = e.reason

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> str:
        """Create the search in the store (idempotent); returns its id."""
        if self.search_id is None:
            self.prior_reference_ms = self._stored_reference_ms()
            self.search_id = self.store.create_search(self.config())
            started = ev.Started(step=0, config=self.config(), reference_ms=self.prior_reference_ms)
            self.store.add_event(self.search_id, started.kind, started.to_payload())
            self.store.set_search_state(self.search_id, "running")
        return self.search_id

    def resume(self, search_id: str) -> "SearchRun":
        """Attach to an existing search and rebuild its state from its events.

        The components given to the constructor must match the stored configuration (same
        problem, method, generator, budget, seed, ...); a mismatch raises ConfigError.
        """
        info = self.store.get_search(search_id)
        if info is None:
            raise ConfigError(f"no search {search_id!r} in this database; `workbench search --list` shows them")
        mine = self.config()
        stored = {k: info.get(k, _CONFIG_DEFAULTS.get(k)) for k in _CONFIG_KEYS}
        same = {"pipeline": lambda a, b: bool(a) == bool(b)}  # a pipeline may resume with another width
        diff = [k for k in _CONFIG_KEYS if not same.get(k, lambda a, b: a == b)(stored[k], mine.get(k))]
        if diff:
            raise ConfigError(f"search {search_id} was started with different settings ({', '.join(diff)}: "
                              f"{[stored[k] for k in diff]} vs {[mine.get(k) for k in diff]}); resume it with "
                              "the same problem, method, generator, forecaster, budget and seed")
        self._reset_state()
        self.search_id = search_id
        events = ev.decode_all(self.store.events(search_id))
        started = next((e for e in events if isinstance(e, ev.Started)), None)
        self.prior_reference_ms = started.reference_ms if started is not None else None
        if self.pipeline:
            self._resume_pipeline(events)
            if not self.finished:
                self._write(ev.Resumed(step=self.step_index, at_seq=len(events)))
                self.store.set_search_state(search_id, "running")
            return self
        last_done = max((i for i, e in enumerate(events) if isinstance(e, ev.StepDone)), default=-1)
        for e in events[: last_done + 1]:
            self._apply(e)
        tail = events[last_done + 1:]
        for e in tail:
            if isinstance(e, ev.Finished):
                self._apply(e)
        step_events = [e for e in tail if e.step == self.step_index
                       and not isinstance(e, (ev.Resumed, ev.Stopped, ev.Started, ev.Finished))]
        self._partial = _Partial(self.step_index, {(e.kind, e.key()): e for e in step_events})
        if not self.finished:
            self._write(ev.Resumed(step=self.step_index, at_seq=len(events)))
            self.store.set_search_state(search_id, "running")
        return self

    def _write(self, event: ev.Event) -> None:
        """Store an event that changes no run state (started, resumed, stopped)."""
        self.store.add_event(self.search_id, event.kind, event.to_payload())

    def stop(self) -> None:
        """Ask the run to stop after the current step (thread-safe); a pipelined run expands no
        more parents and stops once the candidates in flight are recorded."""
        self._stop.set()

    # ------------------------------------------------------------------ one step
    def step(self) -> bool:
        """Run one step (step 0 seeds; later steps expand one parent; pipelined: one tick, see
        pipeline.py). False when the run is over."""
        if self.pipeline:
            return self._pipeline_step()
        if self.search_id is None:
            self.start()
        if self.finished:
            return False
        if self.budget_left <= 0:
            return self._finish("budget spent")
        if self.step_index > self.max_steps:
            return self._finish("max_steps reached")
        rng = random.Random(f"{self.seed}:{self.step_index}")
        self._step_new, self._reserved = [], 0
        self._step_unmeasurable = self._step_submitted = 0
        deferred = self._deferred() if self.idle_steps >= self.max_idle else []
        if deferred:  # the generator ran dry: spend the budget left on the trusted candidates
            self._emit(ev.Selected(parent_id=None, deferred=True))
            queue = deferred[: self.budget_left]
            self._measure_and_archive([self.candidates[e.candidate_id] for e in queue], parent=None,
                                      parent_ids={e.candidate_id: e.parent_id for e in queue})
        elif self.step_index == 0:
            self._emit(ev.Selected(parent_id=None))
            proposals = self._reuse_or(self._seed_proposals)
            new = self._record_generated(proposals, parent=None)
            self._forecast(new)
            self._measure_and_archive(new, parent=None)
        elif not self._expand(rng):
            return self._finish("no usable parent: every archived kernel failed")
        if not deferred:
            self.idle_steps = 0 if self._step_new else self.idle_steps + 1
        streak = self._unmeasurable_streak()
        self._emit(ev.StepDone(gpu_measurements=self.used, considered=self.considered,
                               idle_steps=self.idle_steps, unmeasurable_steps=streak or None))
        if self.budget_left <= 0:
            return self._finish("budget spent")
        if self.unmeasurable_steps >= self.max_unmeasurable:
            return self._finish(self._unmeasurable_end())
        if self.idle_steps >= self.max_idle and not self._deferred():
            return self._finish("exhausted: the generator proposes no new candidates")
        if self._stop.is_set():
            self._write(ev.Stopped(step=self.step_index, summary=self.summary()))
            self.store.set_search_state(self.search_id, "stopped", summary=self.summary())
            return False
        return True

    def _expand(self, rng: random.Random) -> bool:
        """Expand `in_flight` parents (see the class doc); False when no parent can be selected."""
        batches: list[_Batch] = []
        for slot in range(self.in_flight):
            if slot and self.unreserved <= 0:
                break  # nothing left to measure: later parents' children could only be trusted
            tag = {"slot": slot} if self.in_flight > 1 else {}
            if tag:  # one stream per slot: a slot repaired from its events draws nothing from the others'
                rng = random.Random(f"{self.seed}:{self.step_index}:{slot}")
            parent_id = self.selector.select(self.archive, rng, self.step_index)
            if parent_id is None:
                if slot == 0:
                    return False
                break
            self._emit(ev.Selected(parent_id=parent_id, **tag))
            parent = self.candidates[parent_id]
            queue = self._plan_children(parent_id, rng, slot if tag else None, children_done=bool(tag))
            batches.append(self._submit(queue, parent, slot=slot if tag else None))
        self._collect(batches)
        return True

    def _plan_children(self, parent_id: str, rng: random.Random, slot: int | None,
                       children_done: bool) -> list[Candidate]:
        """Generate `parent_id`'s children (reused from a repaired step's events), forecast them,
        let the method plan, record the trusted ones; returns the children to measure, in plan
        order. `slot` tags the generation events; `children_done` writes the `children_done` event."""
        parent, entry = self.candidates[parent_id], self.archive[parent_id]
        ctx = GenerationContext(problem=self.problem, parent=parent, n=self.method.n_children, rng=rng,
                                seen=self._seen(), parent_measurement=self.measurements.get(parent_id),
                                parent_speedup=entry.speedup, hardware_key=self.hardware.key)
        proposals = self._reuse_or(lambda: self.generator.children(ctx), slot)
        new = self._record_generated(proposals, parent=parent, slot=slot)
        if children_done:
            self._emit(ev.ChildrenDone(parent_id=parent_id, **({} if slot is None else {"slot": slot})))
        fc = self._forecast(new)
        best = self.archive.best_measured()
        plan = self.method.plan(new, fc, MethodContext(entry.speedup, self.unreserved, list(self.history),
                                                       best.speedup if best is not None else None,
                                                       self._calibration_set()))
        by_id = {c.id: c for c in new}
        for cid in plan.trust:
            self._trust(by_id[cid], fc.get(cid), parent_id)
        return [by_id[cid] for cid in plan.measure]

    def _seed_proposals(self) -> list[Candidate]:
        """The generator's seeds (up to `max_seeds`). When it has none to give (a ConfigError
        saying why), the run is finished with that reason (state "finished", not left "running")
        and the error goes on to the caller."""
        try:
            return self.generator.seeds(self.problem)[: self.max_seeds]
        except ConfigError as e:
            self._finish(f"no seed: {e}")
            raise

    def _reuse_or(self, generate: Callable[[], list], slot: int | None = None) -> list:
        """Generation for this step (or this slot of it): reuse the repaired step's proposals
        when generation had completed before the crash, else generate. Completed means: a later
        stage was written (one parent per step), or the slot's `children_done` event was."""
        p = self._partial
        if p.step != self.step_index:
            return list(generate())
        if slot is None:
            done = bool(p.kinds() & {"children_done", "forecast", "trusted", "queued", "measured", "archived"})
        else:
            done = p.get("children_done", str(slot)) is not None
        if not done:
            return list(generate())
        out: list = []
        for e in p.events.values():
            if getattr(e, "slot", None) != slot:
                continue
            if isinstance(e, ev.Generated):
                out.append(e.candidate)
            elif isinstance(e, ev.FailedGenerationEvent):
                out.append(FailedGeneration(e.reason, e.raw))
        return out

    def _seen(self) -> set[str]:
        """The ids a generator's children must avoid: every candidate generated so far, or, for a
        generator that `revisits`, only those measured, trusted, in flight or generated in this
        step (a child generated and dropped earlier may be proposed again)."""
        if not getattr(self.generator, "revisits", False):
            return set(self.candidates)
        return (set(self.measurements) | {e.candidate_id for e in self.archive} | set(self._flight)
                | {c.id for c in self._step_new})

    def _record_generated(self, proposals: list, parent: Candidate | None,
                          slot: int | None = None) -> list[Candidate]:
        new: list[Candidate] = []
        tag = {} if slot is None else {"slot": slot}
        seen = self._seen()
        for i, prop in enumerate(proposals):
            if isinstance(prop, FailedGeneration):
                self._emit(ev.FailedGenerationEvent(index=i, parent_id=parent.id if parent else None,
                                                    **tag, **prop.to_payload()))
                continue
            if prop.id in seen or prop.problem_id != self.problem.id:
                continue
            seen.add(prop.id)
            self.store.put_candidate(prop)
            info = self.generator.generation_info(prop.id) if hasattr(self.generator, "generation_info") else None
            self._emit(ev.Generated(candidate=prop, parent_id=parent.id if parent else None,
                                    generation=dict(info) if info else None, **tag))
            new.append(prop)
        self._step_new.extend(new)
        return new

    def _forecast(self, cands: list[Candidate]) -> dict[str, Forecast]:
        out: dict[str, Forecast] = {}
        if self.forecaster is None or not cands:
            return out
        todo = []
        for c in cands:
            prior = self._partial.get("forecast", c.id) if self._partial.step == self.step_index else None
            if prior is not None:
                self._emit(prior)
                out[c.id] = self.forecasts[c.id]
            else:
                todo.append(c)
        if todo:
            fs = self._forecaster_now().forecast_batch([(self.problem, c) for c in todo], self.hardware,
                                                       relative_to="reference")
            for f in fs:
                self.store.put_forecast(f)
                self._emit(ev.Forecasted(forecast=f))
                out[f.candidate_id] = f
        return out

    def _calibration_set(self):
        """The forecaster's held-out forecasts for the methods' policies (once; None: none)."""
        if not hasattr(self, "_calibration"):
            self._calibration = self.forecaster.calibration_set() if self.forecaster is not None else None
        return self._calibration

    def _forecaster_now(self):
        """The forecaster for this step: `forecaster.for_run` given what the run knows
        (`_evidence`); the run's forecaster itself is never changed."""
        return self.forecaster.for_run(self.problem, self.hardware, self._evidence())

    def _stored_reference_ms(self) -> float | None:
        """The median reference time (ms) of this problem's measurements on this GPU already in
        the database (earlier runs, loaded or replayed data), or None."""
        times = [m.reference_ms for m in self.store.measurements(problem_id=self.problem.id,
                                                                  hardware_key=self.hardware.key)
                 if m.reference_ms is not None and m.reference_ms > 0]
        return float(statistics.median(times)) if times else None

    def _evidence(self) -> RunEvidence:
        """What this run knows, rebuilt from the events on resume (so a resumed run forecasts
        exactly as an uninterrupted one): its measurements in measurement order, whose
        reference times give the problem's measured reference time (before the first one, the
        database's time when the run started, `prior_reference_ms`, kept in the "started"
        event); and with `adapt_forecasts` the correct kernels it measured, which an adaptable
        forecaster (the learned one) corrects its forecasts by."""
        kernels = tuple((self.candidates[cid], m.speedup) for cid, m in self.measurements.items()
                        if m.ok and cid in self.candidates) if self.adapt_forecasts else ()
        return RunEvidence(measurements=tuple(self.measurements.values()), kernels=kernels,
                           prior_reference_ms=self.prior_reference_ms)

    def _deferred(self) -> list[Entry]:
        """Trusted, never measured archive entries that the executor can measure, highest
        expected speedup first (archive order on ties)."""
        pending = [e for e in self.archive if e.kind == TRUSTED and e.candidate_id not in self.measurements
                   and e.candidate_id not in self.unmeasurable]
        return sorted(pending, key=lambda e: -(e.speedup or 0.0))

    def _trust(self, c: Candidate, f: Forecast | None, parent_id: str) -> None:
        expected = 2.0 ** f.expected_log2_speedup if f is not None else None
        self._emit(ev.Trusted(candidate_id=c.id, expected_speedup=expected))
        self._archive(c, kind=TRUSTED, status="trusted", speedup=expected, parent_id=parent_id)

    def _measure_and_archive(self, queue: list[Candidate], parent: Candidate | None,
                             parent_ids: dict[str, str | None] | None = None) -> None:
        """Measure `queue` (cut to the budget left) and archive each as measured, as a child of
        `parent`, or of `parent_ids[candidate id]` when given (deferred trusted candidates)."""
        self._collect([self._submit(queue, parent, parent_ids)])

    def _submit(self, queue: list[Candidate], parent: Candidate | None,
                parent_ids: dict[str, str | None] | None = None, slot: int | None = None) -> _Batch:
        """Queue `queue` (cut to the unreserved budget) and hand what is not already measured to
        the executor without waiting; `_collect` records the results."""
        queue = self._measurable(queue)[: max(0, self.unreserved)]
        self._step_submitted += len(queue)
        self._reserved += len(queue)
        todo: list[Candidate] = []
        reused: dict[str, Measurement] = {}
        repairing = self._partial.step == self.step_index
        key = "" if slot is None else str(slot)
        measuring = self._partial.get("measuring", key) if repairing else None
        in_flight = set(measuring.candidate_ids) if measuring is not None else set()
        for rank, c in enumerate(queue):
            pid = parent_ids[c.id] if parent_ids is not None else (parent.id if parent else None)
            self._emit(ev.Queued(candidate_id=c.id, rank=rank, parent_id=pid))
            prior = self._partial.get("measured", c.id) if repairing else None
            if prior is not None:
                reused[c.id] = prior.measurement
            elif c.id in in_flight:
                reused[c.id] = self._stored_or_poisoned(c)
            else:
                todo.append(c)
        futures: list = []
        if todo:
            self._emit(ev.Measuring(candidate_ids=tuple(c.id for c in todo), slot=slot))
            futures = self.executor.submit(self.problem, todo)
            for fut in futures:  # kept as soon as it is back: a run that dies later still has it
                fut.add_done_callback(self._keep)
        return _Batch(queue, parent, parent_ids, reused, futures)

    def _keep(self, fut) -> None:
        """Store a returned measurement (runs in the thread that completed the future)."""
        if not fut.cancelled() and fut.exception() is None:
            self.store.put_measurement(fut.result())

    def _collect(self, batches: list[_Batch]) -> None:
        """Wait for every batch's measurements (each stored as it arrived, see `_keep`), then
        write measured / archived events in submission and queue order."""
        fresh: dict[str, Measurement] = {}
        for fut in as_completed([f for b in batches for f in b.futures]):
            m = fut.result()
            fresh[m.candidate_id] = m
        for b in batches:
            self._reserved -= len(b.queue)
            for c in b.queue:
                m = b.reused.get(c.id) or fresh[c.id]
                self._emit(ev.Measured(measurement=m))
                pid = b.parent_ids[c.id] if b.parent_ids is not None else (b.parent.id if b.parent else None)
                self._archive(c, kind=MEASURED, status=m.status.value, speedup=m.speedup if m.ok else None,
                              parent_id=pid)

    def _stored_or_poisoned(self, c: Candidate) -> Measurement:
        """A candidate that was with the executor when the run died: its stored measurement
        if the executor had returned one, else a `crashed` record (stored), never a new run."""
        m = self.store.get_measurement(c.id, self.hardware.key)
        if m is not None:
            return m
        m = Measurement(candidate_id=c.id, problem_id=self.problem.id, hardware_key=self.hardware.key,
                        hardware_fingerprint=self.hardware.fingerprint, status=Status.CRASHED,
                        reason="the run ended while this candidate was being measured (it may have killed "
                               "the run); it is not measured again")
        self.store.put_measurement(m)
        return m

    def _archive(self, c: Candidate, kind: str, status: str, speedup: float | None, parent_id: str | None,
                 step: int | None = None) -> None:
        island = self.selector.island_of_child(self.archive, parent_id, len(self.archive))
        step = self.step_index if step is None else step
        entry = Entry(candidate_id=c.id, parent_id=parent_id, generation=c.generation, origin=c.origin,
                      kind=kind, status=status, speedup=speedup, step=step, island=island)
        self._emit(ev.Archived(step=step, entry=entry))

    def _finish(self, reason: str) -> bool:
        if not self.finished:
            self.finished, self.finish_reason = True, reason
            summary = self.summary()
            self._emit(ev.Finished(reason=reason, summary=summary))
            self.store.set_search_state(self.search_id, "finished", summary=summary)
        return False

    # ------------------------------------------------------------------ driving
    def run(self, progress: bool = False, max_steps: int | None = None) -> dict[str, Any]:
        """Step until the budget is spent, the run is stopped or exhausted (or `max_steps` steps,
        pipelined: ticks, were run); returns `summary()`."""
        self._stop.clear()
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=self.budget, initial=self.used, unit="gpu", desc=f"search {self.problem.id}")
        try:
            n = 0
            while self.step():
                n += 1
                if bar is not None:
                    bar.n = self.used
                    best = self.archive.best_measured()
                    bar.set_postfix(best=f"{best.speedup:.3f}x" if best else "-", considered=self.considered)
                if max_steps is not None and n >= max_steps:
                    break
            self._drain_on_exit()  # pipelined: return with every candidate handed over recorded
            if bar is not None:
                bar.n = self.used
                bar.refresh()
        finally:
            if bar is not None:
                bar.close()
        return self.summary()

    def summary(self) -> dict[str, Any]:
        """Best measured speedup, GPU measurements used, candidates considered, and forecast
        accuracy (exact and within one bin) on the correct measured candidates that had a forecast."""
        best = self.archive.best_measured()
        n = len(self.history)
        exact = sum(1 for f, m in self.history if f.predicted_bin == m.bin)
        near = sum(1 for f, m in self.history if abs(f.predicted_bin - (m.bin or 0)) <= 1)
        failed = sum(1 for m in self.measurements.values() if m.status is not Status.OK)
        return {"search_id": self.search_id, "problem_id": self.problem.id, "method": self.method.name,
                "best_speedup": best.speedup if best else None,
                "best_candidate_id": best.candidate_id if best else None,
                "gpu_measurements": self.used, "budget": self.budget, "candidates_considered": self.considered,
                "trusted": self.trusted, "failed_measurements": failed,
                "failed_generations": self.failed_generations, "steps": self.step_index,
                "forecast_pairs": n, "forecast_bin_accuracy": exact / n if n else None,
                "forecast_within_one_bin": near / n if n else None,
                "finished": self.finished, "finish_reason": self.finish_reason}


def best_curve(events: Iterable[Any]) -> list[tuple[int, float]]:
    """(GPU measurements used, best measured speedup so far) after each correct measurement that
    improved the best, from a search's events (stored or typed, see events.decode)."""
    out: list[tuple[int, float]] = []
    used, best = 0, -math.inf
    for e in ev.decode_all(events):
        if not isinstance(e, ev.Measured):
            continue
        used += 1
        m = e.measurement
        if m.status is Status.OK and m.speedup and m.speedup > best:
            best = m.speedup
            out.append((used, best))
    return out
