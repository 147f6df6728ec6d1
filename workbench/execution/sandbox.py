"""Run one measurement job in a fresh subprocess and turn whatever happens into a Measurement.

What this protects against: a candidate that segfaults, hits an illegal address (sticky CUDA
error), hangs, exhausts memory, calls exit, floods stdout, or leaves threads behind costs
only its own process; the parent kills the whole process group on timeout and records the
status with the tail of the log.

What it does NOT protect against: code that deliberately attacks the host (it runs as the
same user, with the same file system and network as the parent), reads other candidates'
files in the cache, or exhausts GPU memory of other processes on the same GPU faster than
the per-process memory fraction applies. Run untrusted model output in a container or VM.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workbench.execution.compile_cache import cache_env
from workbench.records import Candidate, Hardware, Measurement, Problem, Status

LOG_TAIL_CHARS = 8000
MAX_LOG_BYTES = 64 * 2**20          # a flood beyond this kills the worker (RLIMIT_FSIZE)


def _preexec(cpu_mem_bytes: int | None, cpus: list[int] | None = None):
    def fn():
        os.setsid()  # own process group: a timeout kills the worker and all its children
        if cpus and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, cpus)
        resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_LOG_BYTES, MAX_LOG_BYTES))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if cpu_mem_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (cpu_mem_bytes, cpu_mem_bytes))
    return fn


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - LOG_TAIL_CHARS))
            text = fh.read().decode("utf-8", "replace")
        return ("[... truncated ...]\n" if size > LOG_TAIL_CHARS else "") + text
    except OSError:
        return ""


class PhaseBudget:
    """Seconds a worker spent per budget, from the phase names it writes to `phase_file`.

    Phases (see gpu_lock): "" (starting, importing, compiling) and "checking" count against
    the compile+correctness budget `compile_s`; "timing" against `run_s` (None: the compile
    budget); waiting for the GPU ("wait-gpu", or "waiting" from older workers) against none.
    `poll()` is called often; time between two polls goes to the phase seen at the first.
    """

    _WAIT = ("wait-gpu", "waiting")

    def __init__(self, phase_file: Path, compile_s: float, run_s: float | None, now: float | None = None):
        self.phase_file, self.compile_s, self.run_s = phase_file, compile_s, run_s
        self.spent = {"compile": 0.0, "run": 0.0}
        self._phase, self._t = "", time.monotonic() if now is None else now

    def _read(self) -> str:
        try:
            return self.phase_file.read_text().strip()
        except OSError:  # not written yet
            return self._phase

    def poll(self, now: float | None = None) -> str | None:
        """Account the time since the last poll; a sentence when a budget has run out, else None."""
        now = time.monotonic() if now is None else now
        dt, self._t = now - self._t, now
        if self._phase == "timing" and self.run_s is not None:
            self.spent["run"] += dt
        elif self._phase not in self._WAIT:
            self.spent["compile"] += dt
        self._phase = self._read()
        if self.run_s is not None and self.spent["run"] > self.run_s:
            return f"timing took longer than {self.run_s:.0f} s"
        if self.spent["compile"] > self.compile_s:
            if self.run_s is None:
                return f"no result within {self.compile_s:.0f} s (not counting waits for the GPU)"
            return f"compilation and correctness took longer than {self.compile_s:.0f} s"
        return None


def _wait(proc: subprocess.Popen, phase_file: Path, timeout_s: float, run_timeout_s: float,
          max_wait_s: float) -> str | None:
    """Wait for the worker; kill its process group when a phase overruns its budget
    (`PhaseBudget`: `timeout_s` for compile+correctness, `run_timeout_s` for timing, waits for
    the GPU free) or the whole job passes `max_wait_s`. Returns None when the worker ended by
    itself, else a sentence saying which budget ran out."""
    t0 = time.monotonic()
    budget = PhaseBudget(phase_file, timeout_s, run_timeout_s, t0)
    while True:
        try:
            proc.wait(timeout=0.1)
            return None
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        why = budget.poll(now)
        if why is None and now - t0 > max_wait_s:
            why = f"no result within {max_wait_s:.0f} s (including waiting for the GPU)"
        if why:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            return why


def run_in_sandbox(problem: Problem, candidate: Candidate, hardware: Hardware, *,
                   device: str = "cuda", gpu_index: int | None = None, timeout_s: float = 300.0,
                   run_timeout_s: float = 120.0, max_wait_s: float = 3600.0,
                   cpu_mem_bytes: int | None = None, lock_path: str | None = None,
                   roofline_floor_ms: float | None = None, options: dict | None = None,
                   cache_root: str | Path | None = None) -> Measurement:
    """Measure one candidate in a new worker process; never raises for a bad candidate.

    `timeout_s` bounds compilation and correctness, `run_timeout_s` the timing phase (which
    starts once the per-GPU lock at `lock_path` is held), `max_wait_s` the whole job. Times
    in seconds. `cpu_mem_bytes` sets RLIMIT_AS (CPU runs only: it breaks CUDA).
    """
    with tempfile.TemporaryDirectory(prefix="wb_job_") as tmp:
        work = Path(tmp)
        job = {"problem": problem.to_dict(), "candidate": candidate.to_dict(), "device": device,
               "workdir": str(work), "lock_path": lock_path, "roofline_floor_ms": roofline_floor_ms,
               **(options or {})}
        job_path, result_path, log_path = work / "job.json", work / "result.json", work / "log.txt"
        job_path.write_text(json.dumps(job))
        env = dict(os.environ)
        env.update(cache_env(candidate, hardware, cache_root))
        env["PYTHONUNBUFFERED"] = "1"
        if device == "cpu":
            env["TRITON_INTERPRET"] = "1"
            env["CUDA_VISIBLE_DEVICES"] = ""
        elif gpu_index is not None:
            env["CUDA_VISIBLE_DEVICES"] = str(gpu_index)
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        t0 = time.time()
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([sys.executable, "-m", "workbench.execution.worker", str(job_path),
                                     str(result_path)], stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, cwd=str(work), env=env,
                                    preexec_fn=_preexec(cpu_mem_bytes, job.get("worker_cpus")))
            timed_out = _wait(proc, work / "phase", timeout_s, run_timeout_s, max_wait_s)
            rc = proc.returncode
        elapsed = time.time() - t0
        log_tail = _tail(log_path)
        try:
            flooded = log_path.stat().st_size >= MAX_LOG_BYTES
        except OSError:
            flooded = False
        if flooded:
            log_tail = (f"[output flood: the log reached {MAX_LOG_BYTES // 2**20} MiB; writes beyond "
                        "that failed]\n" + log_tail)
        result = None
        if result_path.exists():
            try:
                result = json.loads(result_path.read_text())
            except json.JSONDecodeError:
                result = None
        # Kill anything the candidate left in the group (background processes).
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    base = dict(candidate_id=candidate.id, problem_id=problem.id, hardware_key=hardware.key,
                hardware_fingerprint=hardware.fingerprint, hardware_json=json.dumps(hardware.to_dict()))
    if timed_out:
        return Measurement(status=Status.TIMEOUT, reason=f"{timed_out}; worker killed",
                           log=log_tail, compile_s=elapsed, **base)
    if result is None:
        return Measurement(status=Status.CRASHED, reason=exit_reason(rc, MAX_LOG_BYTES), log=log_tail,
                           compile_s=elapsed, **base)
    if flooded and result["status"] != Status.OK.value:
        result = {**result, "reason": f"output flood (log limit {MAX_LOG_BYTES // 2**20} MiB reached); "
                                      f"{result.get('reason', '')}"}
    return result_to_measurement(result, problem, candidate, hardware, log_tail, elapsed)


def exit_reason(rc: int | None, max_log_bytes: int) -> str:
    """Why a worker that wrote no result ended, from its return code."""
    if rc is not None and rc < 0 and -rc == signal.SIGXFSZ:
        return f"output flood: the log passed {max_log_bytes // 2**20} MiB and the worker was stopped"
    if rc is not None and rc < 0:
        return f"worker killed by signal {signal.Signals(-rc).name}"
    return f"worker exited with code {rc} before reporting (exit() or a fatal error)"


def result_to_measurement(result: dict, problem: Problem, candidate: Candidate, hardware: Hardware,
                          log: str = "", elapsed: float | None = None) -> Measurement:
    """A worker's result dict (see worker.run_job) as a Measurement; `elapsed` (s) stands in
    for compile_s when the worker did not report it."""
    base = dict(candidate_id=candidate.id, problem_id=problem.id, hardware_key=hardware.key,
                hardware_fingerprint=hardware.fingerprint, hardware_json=json.dumps(hardware.to_dict()))
    status = Status(result["status"])
    if result.get("traceback"):
        log = (log + "\n" + result["traceback"])[-LOG_TAIL_CHARS:]
    if status is not Status.OK or "candidate" not in result:
        return Measurement(status=status, reason=result.get("reason", ""), log=log,
                           compile_s=result.get("compile_s", elapsed), **base)
    r, c = result["reference"], result["candidate"]
    return Measurement(
        status=Status.OK, reference_ms=r["median_ms"], reference_ci_low_ms=r["ci_low_ms"],
        reference_ci_high_ms=r["ci_high_ms"], reference_runs=r["runs"], candidate_ms=c["median_ms"],
        candidate_ci_low_ms=c["ci_low_ms"], candidate_ci_high_ms=c["ci_high_ms"], candidate_runs=c["runs"],
        speedup=result["speedup"], compile_s=result.get("compile_s"),
        reason=f"timing cv: reference {r['cv_pct']:.2f}%, candidate {c['cv_pct']:.2f}%",
        log=log, **base)
