"""Long work of the app in a child process that can be killed at once, with its progress.

Fitting a learned forecaster (a search's, minutes on a small machine) and computing held-out
forecasts (one fit per fold) cannot be interrupted inside scikit-learn; a thread running them
can only be abandoned, and then it keeps both cores busy for minutes. So the app runs them here:
`ChildJob` starts `python -m workbench.ui.jobs` in its own process group, sends it one JSON line
(`{"target": "module:function", "kwargs": {...}}`), reads JSON lines back (`{"progress": text}`,
then `{"done": value}` or `{"error": text, "workbench": bool}`), and on `cancel()` (or when the
`Gate` it waits on closes) kills the whole group. What a job computes reaches the parent through
files the parent reads anyway: the database (held-out forecasts are stored there) or the cache
of fitted forecasters (`workbench.forecast.fitted`), never through pickles.

`BackgroundJobs` runs named jobs (a thread each, the child inside it where one is used) and
reports their status, latest progress message and elapsed time.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from workbench.errors import WorkbenchError
from workbench.ui.interrupt import Gate, Interrupted

Progress = Callable[[str], None]


class JobError(WorkbenchError):
    """A job failed in its child process; the message is the child's (a WorkbenchError's own)."""


class ChildJob:
    """One call of `target(**kwargs, progress=...)` in a child process (see the module doc)."""

    def __init__(self, target: str, kwargs: dict[str, Any], progress: Progress | None = None):
        self.target, self.kwargs = target, dict(kwargs)
        self.progress = progress or (lambda _m: None)
        self._proc: subprocess.Popen | None = None
        self._cancelled = False
        self._timed_out = False

    def _time_out(self) -> None:
        self._timed_out = True
        self.cancel()

    def cancel(self) -> None:
        """Kill the child and everything it started (idempotent)."""
        self._cancelled = True
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def run(self, gate: Gate | None = None, timeout_s: float | None = None) -> Any:
        """Run to the end and return the child's value; Interrupted when cancelled (or `gate`
        closed); JobError with the child's message when it failed or ran past `timeout_s`."""
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p))
        self._proc = subprocess.Popen([sys.executable, "-m", "workbench.ui.jobs"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=None, text=True, env=env,
                                      start_new_session=True)
        if gate is not None:
            gate.on_close(self.cancel)
        if self._cancelled:
            self.cancel()
        timer = None
        if timeout_s is not None:
            timer = threading.Timer(timeout_s, self._time_out)
            timer.daemon = True
            timer.start()
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(json.dumps({"target": self.target, "kwargs": self.kwargs}) + "\n")
            self._proc.stdin.close()
        except BrokenPipeError:
            pass
        outcome: dict[str, Any] | None = None
        for line in self._proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # a library printing to stdout: not ours
            if "progress" in msg:
                self.progress(str(msg["progress"]))
            elif "done" in msg or "error" in msg:
                outcome = msg
        self._proc.wait()
        if timer is not None:
            timer.cancel()
        if self._timed_out:
            raise JobError(f"it ran for more than {timeout_s:.0f} s and was stopped")
        if self._cancelled:
            raise Interrupted("cancelled")
        if outcome is None:
            raise JobError(f"the job's process ended with code {self._proc.returncode} before it finished "
                           "(killed for memory?); the server's log has its output")
        if "error" in outcome:
            raise JobError(str(outcome["error"]))
        return outcome.get("done")


class BackgroundJobs:
    """Named jobs run once each in daemon threads (see the module doc).

    `status(name)` is "" (never started), "running", "done", "cancelled" or "failed: <message>";
    `message(name)` the latest progress message; `elapsed_s(name)` seconds since it started
    (to its end once it ended). A job that failed or was cancelled can be submitted again.
    """

    def __init__(self) -> None:
        self._status: dict[str, str] = {}
        self._message: dict[str, str] = {}
        self._times: dict[str, tuple[float, float | None]] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._gates: dict[str, Gate] = {}
        self._lock = threading.Lock()

    def submit(self, name: str, fn: Callable[..., Any], child: bool = False, **kwargs: Any) -> bool:
        """Start a job unless one of that name is running or done; True if started.

        child=False: `fn()` runs in the thread. child=True: `fn` is a "module:function" path
        run in a `ChildJob` with `kwargs` (JSON values) and a progress callback."""
        with self._lock:
            if self._status.get(name) in ("running", "done"):
                return False
            self._status[name], self._message[name] = "running", ""
            self._times[name] = (time.monotonic(), None)
            gate = self._gates[name] = Gate()

            def say(text: str) -> None:
                self._message[name] = text

            def target() -> None:
                try:
                    if child:
                        ChildJob(str(fn), kwargs, say).run(gate)
                    else:
                        fn()
                    status = "cancelled" if gate.closed else "done"
                except Interrupted:
                    status = "cancelled"
                except Exception as e:  # noqa: BLE001 - reported through status()
                    text = str(e) if isinstance(e, WorkbenchError) else f"{type(e).__name__}: {e}"
                    status = "cancelled" if gate.closed else f"failed: {text}"
                with self._lock:
                    self._status[name] = status
                    self._times[name] = (self._times[name][0], time.monotonic())

            t = threading.Thread(target=target, name=f"wb-job-{name}", daemon=True)
            self._threads[name] = t
            t.start()
            return True

    def cancel(self, name: str) -> None:
        """Cancel a running job at once (its child process is killed); no-op otherwise."""
        with self._lock:
            gate = self._gates.get(name)
            if self._status.get(name) != "running" or gate is None:
                return
            self._status[name] = "cancelled"
            self._times[name] = (self._times[name][0], time.monotonic())
        gate.close()

    def status(self, name: str) -> str:
        return self._status.get(name, "")

    def message(self, name: str) -> str:
        return self._message.get(name, "")

    def elapsed_s(self, name: str) -> float:
        start, end = self._times.get(name, (0.0, 0.0))
        return ((end if end is not None else time.monotonic()) - start) if name in self._times else 0.0

    def join(self, name: str, timeout: float | None = None) -> None:
        t = self._threads.get(name)
        if t is not None:
            t.join(timeout)


# ---------------------------------------------------------------------- child side
def _resolve(entry: str) -> Callable[..., Any]:
    import importlib

    module, _, name = entry.partition(":")
    if not module.startswith("workbench.") or not name:
        raise ValueError(f"job entry {entry!r} is not a workbench function")
    return getattr(importlib.import_module(module), name)


def _child_main() -> int:
    """Read one job from stdin, run it, write JSON lines to stdout (see the module doc)."""
    out = sys.stdout
    sys.stdout = sys.stderr  # anything the job prints goes to the log, not into the protocol

    def send(obj: dict[str, Any]) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    try:
        job = json.loads(sys.stdin.readline())
        value = _resolve(job["target"])(**job.get("kwargs", {}), progress=lambda m: send({"progress": str(m)}))
        send({"done": value})
        return 0
    except Exception as e:  # noqa: BLE001 - reported to the parent
        import traceback

        traceback.print_exc()
        text = str(e) if isinstance(e, WorkbenchError) else f"{type(e).__name__}: {e}"
        send({"error": text, "workbench": isinstance(e, WorkbenchError)})
        return 1


if __name__ == "__main__":
    raise SystemExit(_child_main())
