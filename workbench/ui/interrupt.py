"""Stopping a search in the app at once, even in the middle of a slow step.

The search loop (`workbench.search.loop.SearchRun`) stops between steps; one step can take
minutes (a local model forecasting sixteen children on a CPU, a language model writing them, a
fit). The runner therefore gives the run a forecaster, generator and executor wrapped here: every
call that can block (forecasting, generating, waiting for measurements) runs in a helper thread
while the search's thread waits for it *or* for the `Gate` to close. Closing the gate makes the
waiting call raise `Interrupted` in the search's thread within `POLL_S`, so the runner can mark
the search stopped (or paused) at once.

What is left behind: the abandoned call finishes in its helper thread and its result is
discarded (nothing it returns is written to the store). Measurements are the exception: a
measurement that was with the executor is real GPU work, so when it comes back after the
interruption it is stored as it is (`Store.put_measurement`), and a resumed search reuses it
(the loop's repair of a step cut short, `workbench/search/loop.py`). `Gate.pending()` counts
them; the runner waits for them before it closes the executor or resumes, so no measurement is
cut short by the app and no "crashed" record is written for a run the user stopped.
`Gate.on_close(fn)` registers a hook run when the gate closes (the runner kills a fitting
subprocess with it).
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from typing import Any, Callable

#: Seconds between checks of the gate while a call runs.
POLL_S = 0.05
#: Helper threads shared by every gate of the process. Reused threads matter: the store keeps one
#: SQLite connection per thread, so a fresh thread per call would open a connection per call.
#: An abandoned call keeps its thread until it ends; calls queue only when all of them are busy.
_POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="wb-call")


def in_helper(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """Run `fn` on the shared helper threads; its future."""
    return _POOL.submit(fn, *args, **kwargs)


class Interrupted(Exception):
    """Raised in the search's thread when the app stops or pauses it in the middle of a call."""


class Gate:
    """Open while the search may run; `close()` interrupts every call waiting on it."""

    def __init__(self) -> None:
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._pairs: list[tuple[Future, Future]] = []  # (proxy handed to the loop, executor's future)
        self._late: list[Future] = []  # executor futures still running when the gate closed
        self._hooks: list[Callable[[], None]] = []

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def close(self) -> None:
        """Interrupt: waiting calls raise Interrupted; futures handed out fail with it; hooks run."""
        with self._lock:
            self._closed.set()
            pairs, self._pairs = self._pairs, []
            hooks, self._hooks = self._hooks, []
            for proxy, real in pairs:
                try:
                    proxy.set_exception(Interrupted("the search was stopped while this was being measured"))
                except InvalidStateError:  # already answered
                    continue
                if not real.done():
                    self._late.append(real)
        for hook in hooks:
            try:
                hook()
            except Exception:  # noqa: BLE001 - a hook that fails must not keep the gate open
                pass

    def on_close(self, hook: Callable[[], None]) -> None:
        """Run `hook` when the gate closes (at once if it is closed already)."""
        with self._lock:
            if not self._closed.is_set():
                self._hooks.append(hook)
                return
        hook()

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`fn(*args, **kwargs)` in a helper thread; its result, its exception, or Interrupted
        as soon as the gate closes (the helper then runs on and its result is dropped)."""
        if self.closed:
            raise Interrupted("the search was stopped")
        fut = _POOL.submit(fn, *args, **kwargs)
        while True:
            try:
                return fut.result(timeout=POLL_S)
            except FuturesTimeout:
                if self.closed:
                    fut.cancel()  # not started yet: never runs
                    raise Interrupted("the search was stopped") from None

    def track(self, real: Future, keep: Callable[[Any], None]) -> Future:
        """A future that mirrors `real` until the gate closes, then fails with Interrupted; a
        result of `real` that arrives after that goes to `keep` (the store) instead."""
        proxy: Future = Future()

        def copy(f: Future) -> None:
            with self._lock:
                self._pairs = [p for p in self._pairs if p[0] is not proxy]
            try:
                if f.cancelled():
                    proxy.cancel()
                elif f.exception() is not None:
                    proxy.set_exception(f.exception())
                else:
                    proxy.set_result(f.result())
                return
            except InvalidStateError:  # the proxy was interrupted first: keep the real result
                pass
            if not f.cancelled() and f.exception() is None:
                keep(f.result())

        with self._lock:
            if self._closed.is_set():
                proxy.set_exception(Interrupted("the search was stopped"))
                self._late.append(real)
            else:
                self._pairs.append((proxy, real))
        real.add_done_callback(copy)
        return proxy

    def pending(self) -> int:
        """Measurements that were with the executor when the gate closed and are not back yet."""
        with self._lock:
            self._late = [f for f in self._late if not f.done()]
            return len(self._late)

    def wait_pending(self, timeout_s: float | None = None) -> bool:
        """Wait until every late measurement is back (True) or `timeout_s` passed (False)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while self.pending():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(POLL_S)
        return True


def _quiet(_message: str) -> None:
    pass


class GatedForecaster:
    """A forecaster whose calls wait on a Gate (every other attribute is the wrapped one's);
    `say(message)` hears what it is doing (the runner shows it as the step's stage)."""

    def __init__(self, inner: Any, gate: Gate, say: Callable[[str], None] = _quiet):
        self._inner, self._gate, self._say = inner, gate, say

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def forecast(self, *args: Any, **kwargs: Any):
        self._say(f"forecasting a candidate with {getattr(self._inner, 'name', 'the forecaster')}")
        return self._gate.call(self._inner.forecast, *args, **kwargs)

    def forecast_batch(self, items, *args: Any, **kwargs: Any):
        self._say(f"forecasting {len(items)} candidate(s) with {getattr(self._inner, 'name', 'the forecaster')}")
        return self._gate.call(self._inner.forecast_batch, items, *args, **kwargs)

    def for_run(self, *args: Any, **kwargs: Any) -> "GatedForecaster":
        inner = self._gate.call(self._inner.for_run, *args, **kwargs)
        return self if inner is self._inner else GatedForecaster(inner, self._gate, self._say)

    def calibration_set(self):
        return self._gate.call(self._inner.calibration_set)


class GatedGenerator:
    """A generator whose seeds and children wait on a Gate."""

    def __init__(self, inner: Any, gate: Gate, say: Callable[[str], None] = _quiet):
        self._inner, self._gate, self._say = inner, gate, say

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def seeds(self, *args: Any, **kwargs: Any):
        self._say(f"choosing seed kernels ({getattr(self._inner, 'name', 'generator')})")
        return self._gate.call(self._inner.seeds, *args, **kwargs)

    def children(self, ctx, *args: Any, **kwargs: Any):
        self._say(f"writing up to {getattr(ctx, 'n', '?')} children ({getattr(self._inner, 'name', 'generator')})")
        return self._gate.call(self._inner.children, ctx, *args, **kwargs)


class GatedExecutor:
    """An executor whose futures fail with Interrupted when the Gate closes; a measurement that
    comes back after that is stored with `keep` (it happened) and counted by `Gate.pending`."""

    def __init__(self, inner: Any, gate: Gate, keep: Callable[[Any], None], say: Callable[[str], None] = _quiet):
        self._inner, self._gate, self._keep, self._say = inner, gate, keep, say

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __contains__(self, candidate_id: str) -> bool:
        return candidate_id in self._inner

    def submit(self, problem, candidates):
        self._say(f"measuring {len(candidates)} candidate(s)")
        return [self._gate.track(f, self._keep) for f in self._inner.submit(problem, candidates)]


def _inner(part: Any) -> Any:
    return part._inner if isinstance(part, (GatedForecaster, GatedGenerator, GatedExecutor)) else part


def gate_run(run: Any, gate: Gate, say: Callable[[str], None] = _quiet) -> Any:
    """Wrap `run`'s forecaster, generator and executor (a `SearchRun`) in `gate`, replacing the
    gate they waited on before (if any); `say` hears each blocking call's stage. Returns the run."""
    if run.forecaster is not None:
        run.forecaster = GatedForecaster(_inner(run.forecaster), gate, say)
    run.generator = GatedGenerator(_inner(run.generator), gate, say)
    run.executor = GatedExecutor(_inner(run.executor), gate, run.store.put_measurement, say)
    return run


#: `gate_run` of a run that waited on another gate (a resumed pause).
regate = gate_run
