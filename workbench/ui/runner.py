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

import argparse
import sys
import threading
import traceback
from typing import Any, Callable

from workbench import bins
from workbench.commands.common import executor_from_env
from workbench.errors import ConfigError, WorkbenchError
from workbench.search.pipeline import parse_in_flight

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

    def __init__(self, store, build: Callable[[Any, argparse.Namespace], Any] | None = None):
        self.store = store
        self.search_id: str | None = None
        self.error: str = ""
        self.message: str = ""
        self.phase: str = "idle"
        self.config: dict[str, Any] = {}
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

    def start(self, problem: str, gpu: str, method: str, forecaster: str, budget: int, seed: int = 0,
              k: int = 2, m: int = 3, max_seeds: int = 2, executor: str | None = None,
              ray_address: str | None = None, generator: str = "auto", llm=None,
              in_flight: int | str | None = None) -> None:
        """Validate cheap choices here (errors raise at once), then build and run in a thread.

        budget: GPU measurements allowed, seeds included; k children measured per parent,
        m*k generated (screening factor). executor: "local" or "ray" for live measurement
        (default: $WORKBENCH_EXECUTOR, $WORKBENCH_RAY_ADDRESS); replays never use Ray.
        generator: auto | mutation | replay | llm | llm-guided. llm: the endpoint
        (`workbench.ui.llm_settings.LLMSettings`), needed by the llm forecaster and generators;
        the thread asks the server for its models before building, so an endpoint that cannot be
        reached, or does not serve the model, fails the start with a message. in_flight: parents
        expanded per step, or "auto" / "auto:N" for a pipelined search (`parse_in_flight`);
        default 1 for a replay (nothing to overlap), else LIVE_IN_FLIGHT.
        """
        if not problem or self.store.get_problem(problem) is None:
            raise ConfigError(f"unknown problem {problem!r}: pick one from the list")
        if not gpu:
            raise ConfigError("no GPU to search on: load the shipped measurements "
                              "(`workbench dataset load-shipped`) or run on a machine with a GPU")
        if forecaster == "none" and method != "measure_all":
            raise ConfigError(f"method {method} needs a forecaster; choose one, or use measure_all")
        if int(budget) < 1:
            raise ConfigError("the budget counts GPU measurements and must be at least 1")
        if forecaster == "llm" or generator in ("llm", "llm-guided"):
            if llm is None:
                raise ConfigError("the llm forecaster and generators need an endpoint: fill in the "
                                  "Language model settings")
            llm.check()
        env_kind, env_address = executor_from_env()
        executor = "local" if gpu.startswith("replay:") else (executor or env_kind)
        if in_flight is None:
            in_flight = 1 if gpu.startswith("replay:") else LIVE_IN_FLIGHT
        in_flight = parse_in_flight(in_flight)
        ray_address = ray_address or env_address
        with self._lock:
            if self.running:
                raise RunnerBusyError("a search is already in progress: pause or stop it first")
            self.config = dict(problem=problem, gpu=gpu, method=method, forecaster=forecaster,
                               budget=int(budget), seed=int(seed), k=int(k), m=int(m), max_seeds=int(max_seeds),
                               executor=executor, ray_address=ray_address, generator=generator, llm=llm,
                               in_flight=in_flight)
            self._run, self.search_id, self.error = None, None, ""
            self.message = "building the search..."
            self._pause_requested = self._stop_requested = False
            self.phase = "preparing"
            self._thread = threading.Thread(target=self._prepare_and_loop, name="wb-search", daemon=True)
            self._thread.start()

    def _make_run(self):
        from workbench.commands.search import build_run

        c = self.config
        llm = c.get("llm")
        args = argparse.Namespace(problem=c["problem"], gpu=c["gpu"], method=c["method"],
                                  forecaster=c["forecaster"], forecaster_path=None,
                                  reference_time="measured", generator=c.get("generator", "auto"),
                                  budget=c["budget"], seed=c["seed"], k=c["k"], m=c["m"], selector="puct",
                                  max_seeds=c["max_seeds"], executor=c["executor"], ray_address=c["ray_address"],
                                  llm_base_url=getattr(llm, "base_url", None), llm_model=getattr(llm, "model", None),
                                  llm_api_key_env=getattr(llm, "api_key_env", None),
                                  llm_concurrency=getattr(llm, "concurrency", None),
                                  in_flight=c.get("in_flight", 1))
        if self._build is not None:
            return self._build(self.store, args)
        if c["forecaster"] == "llm" or args.generator in ("llm", "llm-guided"):
            self._check_endpoint(llm)
        return build_run(self.store, args, progress=self._progress)

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


def candidate_rows(events: list[dict], baselines=None) -> list[dict[str, Any]]:
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
    for e in events:
        p, kind = e["payload"], e["kind"]
        if kind == "generated":
            c = p["candidate"]
            rows[c["id"]] = {"candidate": c["id"], "origin": c.get("origin", ""), "status": "generated",
                             "forecast_bin": "", "confidence": None, "speedup": None, "over_compile": None,
                             "decision": ""}
        elif kind == "forecast":
            f = p["forecast"]
            r = rows.get(f["candidate_id"])
            if r is not None:
                if f.get("parse_status") == "abstained":  # uniform probabilities: no bin, no confidence
                    r["forecast_bin"], r["confidence"] = "abstained", 0.0
                else:
                    probs = f["probabilities"]
                    top = max(range(len(probs)), key=probs.__getitem__)
                    r["forecast_bin"] = bins.label(top)
                    r["confidence"] = round(max(probs) / (sum(probs) or 1.0), 3)
                if r["status"] == "generated":
                    r["status"] = "forecast"
        elif kind == "queued":
            r = rows.get(p["candidate_id"])
            if r is not None and not r["decision"]:
                r["status"] = "queued for GPU"
        elif kind == "trusted":
            r = rows.get(p["candidate_id"])
            if r is not None:
                r["decision"], r["status"] = "trusted", "trusted (not measured)"
        elif kind == "measured":
            m = p["measurement"]
            r = rows.get(m["candidate_id"])
            if r is not None:
                r["decision"], r["status"] = "measured", m["status"]
                r["speedup"] = m.get("speedup")
                r["over_compile"] = over_compile(baselines, m.get("problem_id"), m.get("hardware_key"),
                                                 r["speedup"] if m["status"] == "ok" else None)
    return list(rows.values())
