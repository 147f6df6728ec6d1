"""The one background search runner of a server process, and the table a view shows of a run.

A search runs in a daemon thread; it writes every event to the store. Views never talk to the
thread directly: they poll `store.version()` (and the runner's `phase`) from a periodic
callback and rebuild from the store's events, so a second browser tab (or another process
reading the same database) sees the same run. Building a run happens in the thread too, so
pressing Start never blocks the server: a learned forecaster is loaded from the on-disk cache of
fitted forecasters (`workbench.forecast.fitted`, shared with the CLI and notebooks) or, the first
time for a training set, fitted in a child process (minutes on a small machine; Stop kills it);
`message` says which stage it is in.

Phases: idle -> preparing -> running -> (pausing -> paused <-> running) -> (stopping ->)
finished | stopped | failed. `pause` and `stop` act at once, cutting a slow step short
(`workbench.ui.interrupt`); a paused search resumes from its events, repairing the step that was
cut short; `stop` ends the run for good (its events stay in the store; `workbench search
--resume ID` can still continue it from the shell). Background jobs (held-out forecasts, the
Compare view's runs) are `workbench.ui.jobs.BackgroundJobs`.
"""
from __future__ import annotations

import sys
import threading
import traceback
from typing import Any, Callable

from workbench import bins
from workbench.compose import executor_from_env
from workbench.errors import ConfigError, WorkbenchError
from workbench.records import ParseStatus, Status
from workbench.search.events import (Forecasted, Generated, Measured, Queued, Stopped, Trusted, Unmeasurable,
                                     decode_all)
from workbench.spec import DEFAULTS, ForecasterChoice, MethodChoice, SearchSpec, Target
from workbench.ui.interrupt import Gate, Interrupted, gate_run, regate
from workbench.ui.jobs import BackgroundJobs, ChildJob  # noqa: F401 (BackgroundJobs: re-exported)

PHASES = ("idle", "preparing", "running", "pausing", "paused", "stopping", "finished", "stopped", "failed")
CACHE_KEY = "workbench-runner"
#: In-flight setting of a live search started from the app: pipelined, the executor kept holding
#: as many candidates as it has workers (see workbench/search/pipeline.py).
LIVE_IN_FLIGHT = "auto"


class RunnerBusyError(WorkbenchError):
    """A search is already in progress in this server process."""


class SearchRunner:
    """Starts, pauses, resumes and stops one search at a time (thread-safe).

    `start` returns at once; `phase`, `search_id` and `error` say where the run is, and
    `message` the latest stage message while preparing (fitting or loading the forecaster).
    Pause and Stop act at once, even in the middle of a slow step or a fit: the run's
    forecaster, generator and executor wait on a `Gate` (`workbench.ui.interrupt`) that
    pause / stop close, and a learned forecaster that must be fitted is fitted in a child
    process (`workbench.ui.jobs`) that stop kills. Until the search's thread has let go, the
    phase is "pausing" or "stopping".
    """

    def __init__(self, store, build: Callable[[Any, SearchSpec], Any] | None = None):
        self.store = store
        self.search_id: str | None = None
        self.error: str = ""
        self.message: str = ""
        self.phase: str = "idle"
        self.config: dict[str, Any] = {}
        self.spec: SearchSpec | None = None
        self.llm = None
        self.stage, self.stage_since = "", 0.0
        self._fits_found: dict[tuple, dict] = {}
        self._build = build
        self._thread: threading.Thread | None = None
        self._run = None
        self._gate = Gate()
        self._pause_requested = False
        self._stop_requested = False
        self._interrupted = False  # the last pause cut a step short: rebuild from events on resume
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        """True while the background thread is alive (preparing or stepping)."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def run(self):
        """The current `SearchRun` (None before it is built)."""
        return self._run

    @property
    def hardware_key(self) -> str:
        """The GPU type the current run measures on (e.g. "h100"), "" before it is built."""
        hw = getattr(self._run, "hardware", None)
        return str(getattr(hw, "key", "") or "")

    def start(self, problem: str, gpu: str, method: str, forecaster: str, budget: int, seed: int | None = None,
              k: int | None = None, m: int | None = None, max_seeds: int | None = None,
              executor: str | None = None, ray_address: str | None = None, generator: str | None = None,
              llm=None, in_flight: int | str | None = None) -> None:
        """`start_spec` of the spec these choices make (`app_spec`); None: the registry's default.

        gpu: a target string (`Target.parse`). executor: "local" or "ray" for live measurement
        (default: $WORKBENCH_EXECUTOR, $WORKBENCH_RAY_ADDRESS); replays never use Ray.
        in_flight: parents expanded per step, or "auto" / "auto:N" for a pipelined search
        (`workbench.search.pipeline.parse_in_flight`); default 1 for a replay (nothing to
        overlap), else LIVE_IN_FLIGHT.
        """
        spec = app_spec(problem, gpu, method, forecaster, budget, seed=seed, k=k, m=m, max_seeds=max_seeds,
                        executor=executor, ray_address=ray_address, generator=generator, in_flight=in_flight)
        self.start_spec(spec, llm=llm, gpu=gpu)

    def start_spec(self, spec: SearchSpec, llm=None, gpu: str | None = None) -> None:
        """Validate cheap choices here (errors raise at once), then build and run `spec` in a thread.

        llm: the endpoint (`workbench.ui.llm_settings.LLMSettings`), needed by the llm
        forecaster and generators; the thread asks the server for its models before building, so
        an endpoint that cannot be reached, or does not serve the model, fails the start with a
        message. gpu: the form's GPU value, shown by the view (default: the target's string).
        """
        if not spec.problem or self.store.get_problem(spec.problem) is None:
            raise ConfigError(f"unknown problem {spec.problem!r}: pick one from the list")
        spec.forecaster.check_files(LOCAL_LABELS)  # the local model's files (a message, not a load error)
        if spec.needs_llm:
            if llm is None:
                raise ConfigError("the llm forecaster and generators need an endpoint: fill in the "
                                  "Language model settings")
            llm.check()
        with self._lock:
            if self.running or self.phase in ("stopping", "pausing"):
                raise RunnerBusyError("a search is already in progress: pause or stop it first")
            self._retire()
            self.spec, self.llm = spec, llm
            self.config = dict(problem=spec.problem, gpu=gpu or str(spec.target), method=spec.method.name,
                               forecaster=spec.forecaster.name, budget=spec.budget, seed=spec.seed,
                               k=spec.method.k, m=spec.method.m, max_seeds=spec.max_seeds,
                               executor="ray" if spec.target.kind == "ray" else "local",
                               ray_address=spec.target.address, generator=spec.generator.name, llm=llm,
                               in_flight=spec.in_flight)
            self._run, self.search_id, self.error = None, None, ""
            self.message = "building the search..."
            self._pause_requested = self._stop_requested = self._interrupted = False
            self._gate = Gate()
            self.phase = "preparing"
            self._thread = threading.Thread(target=self._prepare_and_loop, args=(self._gate,), name="wb-search",
                                            daemon=True)
            self._thread.start()

    def _make_run(self, gate: Gate):
        from workbench import compose

        spec = self.spec
        if spec.needs_llm:
            gate.call(self._check_endpoint, self.llm)
        if self._build is not None:  # a caller's builder (tests, benchmarks): its run waits on the gate too
            return gate_run(gate.call(self._build, self.store, spec), gate, self._stage)
        executor = gate.call(compose.make_executor, spec.target, self.store)
        try:
            from workbench.ui.tasks import needs_fit

            hw = executor.hardware.key
            # A build that found its fit leaves (its key -> the table counts then): the same start
            # on unchanged data skips the look into the fit cache (it reads every row).
            known = (spec.problem, hw, spec.forecaster.name, spec.forecaster.path, spec.forecaster.reference_time)
            counts = {t: n for t, n in self.store.counts().items() if t in ("problems", "candidates", "measurements")}
            if self._fits_found.get(known) != counts and gate.call(needs_fit, spec, self.store, spec.problem, hw):
                self.message = "fitting the learned forecaster in a child process (Stop cancels it)..."
                ChildJob("workbench.ui.tasks:prefit_forecaster",
                         {"db": str(self.store.path), "spec": spec.to_dict(), "hardware_key": hw},
                         self._progress).run(gate)
            run = gate.call(compose.build, spec, self.store, llm=self.llm, progress=self._progress,
                            executor=executor)
            self._fits_found[known] = counts
        except BaseException:
            _close_quietly(executor)
            raise
        return gate_run(run, gate, self._stage)

    def _check_endpoint(self, llm) -> None:
        """Ask the server for its models: unreachable, or not serving the model, is an LLMError."""
        from workbench.llm.errors import LLMConfigError

        self.message = f"asking {llm.base_url} for its models..."
        models = llm.served_models()
        if llm.model not in models:
            raise LLMConfigError(f"{llm.base_url} does not serve a model named {llm.model!r}; it serves "
                                 f"{', '.join(models[:20]) or 'none'}: type one of those in the Language "
                                 "model settings")

    def _progress(self, message: str) -> None:
        """Stage messages of the build (a fit's progress), shown by the search view."""
        self.message = message

    def _stage(self, message: str) -> None:
        """What the running search is doing now (forecasting, generating, measuring) and since
        when: `stage` and `stage_since` (time.monotonic())."""
        import time

        self.stage, self.stage_since = message, time.monotonic()

    def _prepare_and_loop(self, gate: Gate) -> None:
        try:
            run = self._make_run(gate)
            gate.call(run.start)
            self._run, self.search_id = run, run.search_id
        except Interrupted:
            self.message = "stopped while preparing: no search was started"
            self._settle("stopped")
            return
        except Exception as e:  # noqa: BLE001 - shown in the UI
            if gate.closed:
                self._settle("stopped")
                return
            self._fail(e)
            return
        self._loop(gate)

    def _loop(self, gate: Gate) -> None:
        run = self._run
        try:
            if self._stop_requested or self._pause_requested:  # asked while preparing
                self._settle("stopped" if self._stop_requested else "paused")
                if self._stop_requested:
                    self._close()
                return None
            if self._interrupted:  # the last pause cut a step short: rebuild the run from its events
                self._interrupted = False
                gate.call(run.resume, self.search_id)
            with self._lock:
                if self.phase == "preparing":
                    self.phase = "running"
            summary = run.run(progress=False)
            self._settle("finished" if run.finished else "stopped" if self._stop_requested else "paused")
            if self.phase != "paused":
                self._close()
            return summary
        except Interrupted:
            self._record_interruption(run)
            return None
        except Exception as e:  # noqa: BLE001 - shown in the UI; the events so far are kept
            if gate.closed:
                self._record_interruption(run)
                return None
            self._fail(e)

    def _record_interruption(self, run) -> None:
        """The search was cut short mid-step by pause or stop: store a `stopped` event (the loop
        writes one only between steps) and mark the phase."""
        self._interrupted = True
        try:
            summary = run.summary()
            stopped = Stopped(step=run.step_index, summary=summary)
            self.store.add_event(self.search_id, stopped.kind, stopped.to_payload())
            self.store.set_search_state(self.search_id, "stopped", summary=summary)
        except Exception as e:  # noqa: BLE001 - the events so far are kept either way
            print(f"workbench: could not record the stop of {self.search_id}: {e}", file=sys.stderr)
        self._settle("paused" if self._pause_requested and not self._stop_requested else "stopped")
        if self.phase == "stopped":
            self._close()

    def _fail(self, e: Exception) -> None:
        """`error` is what the page shows: a WorkbenchError's own message (it says what to do),
        else the exception's type and message; the traceback goes to the server's log only."""
        self.error = str(e) if isinstance(e, WorkbenchError) else f"{type(e).__name__}: {e}"
        print(f"workbench: search failed: {self.error}\n{traceback.format_exc()[-3000:]}", file=sys.stderr)
        self._settle("failed")
        self._close()

    def _close(self) -> None:
        """Close the run's executor once the measurements it still holds are back (in the
        background: a stop returns at once, and no measurement is cut short by the app)."""
        ex = getattr(self._run, "executor", None)
        if ex is None:
            return
        gate = self._gate
        if not gate.pending():
            _close_quietly(ex)
            return
        threading.Thread(target=lambda: (gate.wait_pending(), _close_quietly(ex)), name="wb-close",
                         daemon=True).start()

    def _retire(self) -> None:
        """Before a new start: a paused run that will not be resumed gives its executor back."""
        if self._run is not None and self.phase == "paused":
            self._close()

    def _settle(self, phase: str) -> None:
        """Set the phase the search's thread ends (or begins running) in."""
        with self._lock:
            self.phase = phase

    def pause(self) -> None:
        """Stop at once (a step cut short is repaired on resume); `resume` continues the same
        search. While preparing there is no search yet: pause then stops."""
        with self._lock:
            if self.phase == "preparing":
                stop_instead = True
            elif self.phase != "running":
                return
            else:
                stop_instead = False
                self._pause_requested = True
                self.phase = "pausing"
        if stop_instead:
            self.stop()
            return
        if self._run is not None:
            self._run.stop()
        self._gate.close()

    def resume(self) -> None:
        """Continue a paused search (after the measurements it still had with the executor are back)."""
        with self._lock:
            if self.running or self._run is None or self.phase != "paused":
                return
            self._pause_requested = self._stop_requested = False
            old, self._gate = self._gate, Gate()
            self.phase = "running"
            self._thread = threading.Thread(target=self._resume_and_loop, args=(old, self._gate),
                                            name="wb-search", daemon=True)
            self._thread.start()

    def _resume_and_loop(self, old: Gate, gate: Gate) -> None:
        if old.pending():
            self.message = f"waiting for {old.pending()} measurement(s) still with the executor..."
            while not old.wait_pending(timeout_s=0.2):
                if gate.closed:
                    self._settle("stopped" if self._stop_requested else "paused")
                    return
        regate(self._run, gate, self._stage)
        self._loop(gate)

    def stop(self) -> None:
        """End the run at once (a step in progress is cut short; measurements already with the
        executor are kept when they come back); it cannot be resumed from the app."""
        close = False
        with self._lock:
            self._stop_requested = True
            if self.phase in ("preparing", "running", "pausing"):
                self.phase = "stopping"
            elif self.phase == "paused":
                self.phase, close = "stopped", True
        if self._run is not None:
            self._run.stop()
        self._gate.close()
        if close:
            self._close()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)


def _close_quietly(executor) -> None:
    if executor is not None and hasattr(executor, "close"):
        try:
            executor.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass


#: The app's labels of the local forecaster's fields (`ForecasterChoice.check_files`).
LOCAL_LABELS = {"model": "the model directory", "gguf_file": "the GGUF file", "adapter": "the adapter directory"}


def app_spec(problem: str, gpu: str, method: str, forecaster: str | ForecasterChoice, budget: int,
             seed: int | None = None, k: int | None = None, m: int | None = None, max_seeds: int | None = None,
             executor: str | None = None, ray_address: str | None = None, generator: str | None = None,
             in_flight: int | str | None = None) -> SearchSpec:
    """The SearchSpec of the app's choices; None takes the registry's default. `forecaster`: a
    name, or a ForecasterChoice (the local forecaster's model and adapter). A live target is
    measured by `executor` (default $WORKBENCH_EXECUTOR) at `ray_address` (default
    $WORKBENCH_RAY_ADDRESS); a replay always locally, one parent in flight unless told."""
    if not gpu:
        raise ConfigError("no GPU to search on: load the shipped measurements "
                          "(`workbench dataset load-shipped`) or run on a machine with a GPU")
    target = Target.parse(gpu)
    env_kind, env_address = executor_from_env()
    if target.live:
        target = target.with_executor(executor or env_kind, ray_address or env_address)
    if in_flight is None:
        in_flight = 1 if target.replay else LIVE_IN_FLIGHT
    pick = lambda v, key: DEFAULTS[key] if v is None else v  # noqa: E731
    return SearchSpec(problem, target=target, forecaster=forecaster, generator=pick(generator, "generator"),
                      method=MethodChoice(method, k=int(pick(k, "k")), m=int(pick(m, "m"))), budget=int(budget),
                      seed=int(pick(seed, "seed")), max_seeds=int(pick(max_seeds, "max_seeds")),
                      in_flight=in_flight)


def shared(store) -> dict[str, Any]:
    """The per-process runner and jobs for `store`, kept in `pn.state.cache` so every browser
    session of this server shares them."""
    import panel as pn

    key = (CACHE_KEY, str(getattr(store, "path", id(store))))
    if key not in pn.state.cache:
        pn.state.cache[key] = {"runner": SearchRunner(store), "jobs": BackgroundJobs()}
    return pn.state.cache[key]


def candidate_rows(events: list, baselines=None) -> list[dict[str, Any]]:
    """One row per generated candidate of a search, from its events (oldest first).

    confidence = probability of the most likely bin, None for an abstention (forecast_bin
    "abstained": the forecaster gave no distribution, so there is no confidence to show, as the
    Inspector says too); speedup = measured speedup over eager PyTorch (x), None until measured;
    over_compile = that speedup over torch.compile on the same problem and GPU type
    (`workbench.dataset.baselines`), None without a measured baseline; decision = "trusted"
    (forecast stands in), "measured", or "no recording" (a replay cannot measure it, so nothing
    was measured). `baselines`: keyed by (problem_id, hardware_key); None uses the shipped ones.
    """
    from workbench.dataset.baselines import over_compile, shipped_compile_baselines

    if baselines is None:
        baselines = shipped_compile_baselines()
    rows: dict[str, dict[str, Any]] = {}
    for e in decode_all(events):
        if isinstance(e, Generated):
            c = e.candidate
            rows[c.id] = {"candidate": c.id, "origin": c.origin, "status": "generated",
                          "forecast_bin": "", "confidence": None, "speedup": None, "over_compile": None,
                          "decision": ""}
        elif isinstance(e, Forecasted):
            f = e.forecast
            r = rows.get(f.candidate_id)
            if r is not None:
                if f.parse_status == ParseStatus.ABSTAINED:  # uniform probabilities: no bin, no confidence
                    r["forecast_bin"], r["confidence"] = "abstained", None
                else:
                    probs = list(f.probabilities)
                    top = max(range(len(probs)), key=probs.__getitem__)
                    r["forecast_bin"] = bins.label(top)
                    r["confidence"] = round(max(probs) / (sum(probs) or 1.0), 3)
                if r["status"] == "generated":
                    r["status"] = "forecast"
        elif isinstance(e, Queued):
            r = rows.get(e.candidate_id)
            if r is not None and not r["decision"]:
                r["status"] = "queued for GPU"
        elif isinstance(e, Trusted):
            r = rows.get(e.candidate_id)
            if r is not None:
                r["decision"], r["status"] = "trusted", "trusted (not measured)"
        elif isinstance(e, Unmeasurable):
            r = rows.get(e.candidate_id)
            if r is not None and r["decision"] != "trusted":
                r["decision"], r["status"] = "no recording", "not measured (no recording to replay)"
        elif isinstance(e, Measured):
            m = e.measurement
            r = rows.get(m.candidate_id)
            if r is not None:
                r["decision"], r["status"] = "measured", m.status.value
                r["speedup"] = m.speedup
                r["over_compile"] = over_compile(baselines, m.problem_id, m.hardware_key,
                                                 r["speedup"] if m.status is Status.OK else None)
    return list(rows.values())
