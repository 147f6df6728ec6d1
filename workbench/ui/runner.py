"""The one background search runner of a server process, background jobs, and the table a
view shows of a run.

A search runs in a daemon thread; it writes every event to the store. Views never talk to the
thread directly: they poll `store.version()` (and the runner's `phase`) from a periodic
callback and rebuild from the store's events, so a second browser tab (or another process
reading the same database) sees the same run. Building a run happens in the thread too, so
pressing Start never blocks the server: a learned forecaster is loaded from the on-disk cache of
fitted forecasters (`workbench.forecast.fitted`, shared with the CLI and notebooks) or, the first
time for a training set, fitted (tens of seconds); `message` says which stage it is in.

Phases: idle -> preparing -> running -> (paused <-> running) -> finished | stopped | failed.
`pause` stops after the current step and can be resumed; `stop` ends the run for good (its
events stay in the store; `workbench search --resume ID` can still continue it from the shell).
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
from workbench.search.events import Forecasted, Generated, Measured, Queued, Trusted, decode_all
from workbench.spec import DEFAULTS, ForecasterChoice, MethodChoice, SearchSpec, Target

PHASES = ("idle", "preparing", "running", "paused", "finished", "stopped", "failed")
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
        self._build = build
        self._thread: threading.Thread | None = None
        self._run = None
        self._pause_requested = False
        self._stop_requested = False
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        """True while the background thread is alive (preparing or stepping)."""
        return self._thread is not None and self._thread.is_alive()

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
            if self.running:
                raise RunnerBusyError("a search is already in progress: pause or stop it first")
            self.spec, self.llm = spec, llm
            self.config = dict(problem=spec.problem, gpu=gpu or str(spec.target), method=spec.method.name,
                               forecaster=spec.forecaster.name, budget=spec.budget, seed=spec.seed,
                               k=spec.method.k, m=spec.method.m, max_seeds=spec.max_seeds,
                               executor="ray" if spec.target.kind == "ray" else "local",
                               ray_address=spec.target.address, generator=spec.generator.name, llm=llm,
                               in_flight=spec.in_flight)
            self._run, self.search_id, self.error = None, None, ""
            self.message = "building the search..."
            self._pause_requested = self._stop_requested = False
            self.phase = "preparing"
            self._thread = threading.Thread(target=self._prepare_and_loop, name="wb-search", daemon=True)
            self._thread.start()

    def _make_run(self):
        from workbench import compose

        spec = self.spec
        if self._build is not None:
            return self._build(self.store, spec)
        if spec.needs_llm:
            self._check_endpoint(self.llm)
        return compose.build(spec, self.store, llm=self.llm, progress=self._progress)

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

    def _prepare_and_loop(self) -> None:
        try:
            run = self._make_run()
            run.start()
            self._run, self.search_id = run, run.search_id
        except Exception as e:  # noqa: BLE001 - shown in the UI
            self._fail(e)
            return
        self._loop()

    def _loop(self) -> None:
        try:
            if self._stop_requested or self._pause_requested:  # asked while preparing
                self.phase = "stopped" if self._stop_requested else "paused"
                if self._stop_requested:
                    self._close()
                return None
            self.phase = "running"
            summary = self._run.run(progress=False)
            if self._run.finished:
                self.phase = "finished"
            else:
                self.phase = "stopped" if self._stop_requested else "paused"
            if self.phase != "paused":
                self._close()
            return summary
        except Exception as e:  # noqa: BLE001 - shown in the UI; the events so far are kept
            self._fail(e)

    def _fail(self, e: Exception) -> None:
        """`error` is what the page shows: a WorkbenchError's own message (it says what to do),
        else the exception's type and message; the traceback goes to the server's log only."""
        self.error = str(e) if isinstance(e, WorkbenchError) else f"{type(e).__name__}: {e}"
        print(f"workbench: search failed: {self.error}\n{traceback.format_exc()[-3000:]}", file=sys.stderr)
        self.phase = "failed"
        self._close()

    def _close(self) -> None:
        ex = getattr(self._run, "executor", None)
        if ex is not None and hasattr(ex, "close"):
            try:
                ex.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass

    def pause(self) -> None:
        """Stop after the current step; `resume` continues the same search."""
        self._pause_requested = True
        if self._run is not None:
            self._run.stop()

    def resume(self) -> None:
        with self._lock:
            if self.running or self._run is None or self.phase != "paused":
                return
            self._pause_requested = False
            self._thread = threading.Thread(target=self._loop, name="wb-search", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """End the run after the current step; it cannot be resumed from the app."""
        self._stop_requested = True
        if self._run is not None:
            self._run.stop()
        if not self.running and self.phase == "paused":
            self.phase = "stopped"
            self._close()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)


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


class BackgroundJobs:
    """Named one-off jobs (e.g. computing held-out forecasts) run once in daemon threads.

    `status(name)` is "" (never started), "running", "done" or "failed: <message>".
    """

    def __init__(self) -> None:
        self._status: dict[str, str] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def submit(self, name: str, fn: Callable[[], Any]) -> bool:
        """Start `fn` unless a job of that name is running or done; True if started."""
        with self._lock:
            if self._status.get(name) in ("running", "done"):
                return False
            self._status[name] = "running"

            def target() -> None:
                try:
                    fn()
                    self._status[name] = "done"
                except Exception as e:  # noqa: BLE001 - reported through status()
                    self._status[name] = f"failed: {type(e).__name__}: {e}"

            t = threading.Thread(target=target, name=f"wb-job-{name}", daemon=True)
            self._threads[name] = t
            t.start()
            return True

    def status(self, name: str) -> str:
        return self._status.get(name, "")

    def join(self, name: str, timeout: float | None = None) -> None:
        t = self._threads.get(name)
        if t is not None:
            t.join(timeout)


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

    confidence = probability of the most likely bin; speedup = measured speedup over eager
    PyTorch (x), None until measured; over_compile = that speedup over torch.compile on the
    same problem and GPU type (`workbench.dataset.baselines`), None without a measured baseline;
    decision = "trusted" (forecast stands in) or "measured". `baselines`: keyed by
    (problem_id, hardware_key); None uses the shipped ones.
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
                    r["forecast_bin"], r["confidence"] = "abstained", 0.0
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
        elif isinstance(e, Measured):
            m = e.measurement
            r = rows.get(m.candidate_id)
            if r is not None:
                r["decision"], r["status"] = "measured", m.status.value
                r["speedup"] = m.speedup
                r["over_compile"] = over_compile(baselines, m.problem_id, m.hardware_key,
                                                 r["speedup"] if m.status is Status.OK else None)
    return list(rows.values())
