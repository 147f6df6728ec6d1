"""Measure many candidates of one problem in one worker process, replacing it when it dies.

Starting a Python process with torch and a CUDA context costs seconds, more than measuring a
typical candidate. A chunk worker (`python -m workbench.execution.chunked JOBS RESULTS`) runs
the jobs of a chunk one after another with the same checks as `worker.run_job`, appending
one JSON line per finished job. The parent watches the results file:

- a worker that dies (segfault, os._exit, kill) or overruns a budget of the candidate it is
  on (compile+correctness, timing; waiting for the GPU's lock counts against neither, see
  sandbox.PhaseBudget) costs only that candidate, which is recorded as crashed or timeout
  with the log tail; the unstarted rest of the chunk goes to a fresh worker;
- the worker exits by itself after a candidate that leaves the process suspect (a sticky CUDA
  error, a replaced torch or timer function, a changed precision flag, a leftover thread), so
  no later candidate is measured in a tampered process.

Isolation is therefore per process *between* suspect candidates; see sandbox.py for what a
process boundary does not protect against.
"""
from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Sequence

from workbench.execution.compile_cache import cache_env
from workbench.execution.sandbox import PhaseBudget, exit_reason, result_to_measurement
from workbench.records import Candidate, Hardware, Measurement, Problem, Status

LOG_TAIL_CHARS = 6000
MAX_LOG_BYTES = 256 * 2**20
_STICKY = ("illegal memory access", "device-side assert", "CUDA error", "unspecified launch failure",
           "misaligned address", "an illegal instruction")


# --------------------------------------------------------------------------- worker side
def _worker_main(jobs_path: str, results_path: str) -> None:
    from workbench.execution import guards
    from workbench.execution.worker import Verdict, run_job

    jobs = [json.loads(line) for line in Path(jobs_path).read_text().splitlines() if line.strip()]
    import torch

    # Full fp32 references: cuDNN would otherwise run fp32 convolutions in TF32, so the
    # reference itself would miss fp32 tolerance. (matmul TF32 is already off by default.)
    torch.backends.cudnn.allow_tf32 = False
    baseline = None
    with open(results_path, "a") as out:
        for job in jobs:
            print(f"=== candidate {job['candidate']['id']} ===", flush=True)
            t0 = time.time()
            try:
                result = run_job(job)
            except Verdict as v:
                result = {"status": v.status, "reason": v.reason}
            except SystemExit as e:
                result = {"status": "crashed", "reason": f"the candidate called exit({e.code})"}
            except MemoryError:
                result = {"status": "runtime_error", "reason": "out of host memory"}
            except BaseException as e:  # noqa: BLE001
                result = {"status": "runtime_error", "reason": f"{type(e).__name__}: {str(e)[:2000]}",
                          "traceback": traceback.format_exc()[-3000:]}
            result["candidate_id"] = job["candidate"]["id"]
            result.setdefault("compile_s", round(time.time() - t0, 3))
            sys.modules.pop(f"wb_candidate_{job['candidate']['id']}", None)
            gc.collect()
            suspect = any(s in result.get("reason", "") for s in _STICKY)
            if baseline is None:
                baseline = guards.RuntimeSnapshot()
            else:
                changes = guards.RuntimeSnapshot().changes_since(baseline)
                if changes and result["status"] == "ok":
                    result = {"status": "cheat_suspected", "candidate_id": result["candidate_id"],
                              "reason": "left the process changed: " + "; ".join(changes)}
                suspect = suspect or bool(changes)
            out.write(json.dumps(result) + "\n")
            out.flush()
            if suspect:
                # Leave on purpose; the parent re-runs the rest in a fresh process.
                out.write(json.dumps({"_exit": "suspect"}) + "\n")
                out.flush()
                break
            try:
                import torch

                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001
                break
        else:
            out.write(json.dumps({"_exit": "done"}) + "\n")
            out.flush()
    sys.stdout.flush()
    os._exit(0)


# --------------------------------------------------------------------------- parent side
def _preexec(cpus: list[int] | None = None):
    import resource

    os.setsid()
    if cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cpus)
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_LOG_BYTES, MAX_LOG_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _read_results(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return out


def _tail(path: Path, start: int = 0) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(start, size - LOG_TAIL_CHARS))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def to_measurement(result: dict, problem: Problem, candidate: Candidate, hardware: Hardware,
                   log: str = "") -> Measurement:
    return result_to_measurement(result, problem, candidate, hardware, log)


def run_chunk(problem: Problem, candidates: Sequence[Candidate], hardware: Hardware, *, device: str = "cuda",
              gpu_index: int | None = None, timeout_s: float = 120.0, lock_path: str | None = None,
              roofline_floor_ms: float | None = None, options: dict | None = None,
              cache_root: str | Path | None = None, on_result=None, run_timeout_s: float | None = None,
              max_wait_s: float = 3600.0, on_raw=None, respawn: bool = True) -> list[Measurement]:
    """Measure `candidates` (one problem, distinct ids) in as few worker processes as their
    behaviour allows.

    Returns one Measurement per candidate, in input order. Budgets per candidate, in seconds:
    `timeout_s` for starting/compiling/checking (CUDA C++ candidates get three times as long),
    `run_timeout_s` for its timed regions (None: they count against `timeout_s`), `max_wait_s`
    in all; time spent waiting for the GPU's lock counts against none but `max_wait_s`.
    `on_result(measurement)` is called as each one is known; `on_raw(candidate, result)` with
    the worker's result dict (e.g. the `repeats` of `timing_repeats`), when there is one.
    `options["worker_cpus"]`, when set, is the CPU affinity of the worker process.
    `respawn=False`: return once the first worker process has ended, with Measurements only for
    the candidates it finished or was on (a caller's queue can then spread the rest).
    """
    pending = list({c.id: c for c in candidates}.values())  # a repeated id is measured once
    done: dict[str, Measurement] = {}
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
        env["CUDA_VISIBLE_DEVICES"] = ""
    elif gpu_index is not None:
        env["CUDA_VISIBLE_DEVICES"] = str(gpu_index)

    def record(c: Candidate, m: Measurement) -> None:
        done[c.id] = m
        if on_result:
            on_result(m)

    while pending:
        with tempfile.TemporaryDirectory(prefix="wb_chunk_") as tmp:
            work = Path(tmp)
            jobs_path, results_path, log_path = work / "jobs.jsonl", work / "results.jsonl", work / "log.txt"
            with open(jobs_path, "w") as fh:
                for c in pending:
                    cdir = work / c.id
                    cdir.mkdir(exist_ok=True)
                    fh.write(json.dumps({"problem": problem.to_dict(), "candidate": c.to_dict(), "device": device,
                                         "workdir": str(cdir), "lock_path": lock_path,
                                         "roofline_floor_ms": roofline_floor_ms, **(options or {})}) + "\n")
            cenv = dict(env)
            if any(c.backend == "cuda" for c in pending):
                # One extensions dir per chunk worker, keyed by the first CUDA candidate's build key.
                first = next(c for c in pending if c.backend == "cuda")
                cenv.update(cache_env(first, hardware, cache_root))
            else:
                cenv.update(cache_env(pending[0], hardware, cache_root))
            with open(log_path, "wb") as log:
                proc = subprocess.Popen([sys.executable, "-m", "workbench.execution.chunked", str(jobs_path),
                                         str(results_path)], stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, cwd=str(work), env=cenv,
                                        preexec_fn=lambda: _preexec((options or {}).get("worker_cpus")))
                n_seen, log_mark = 0, 0
                killed_for_timeout: str | None = None
                current, budget, started = None, None, time.monotonic()
                while True:
                    rc = proc.poll()
                    results = _read_results(results_path)
                    if len(results) > n_seen:
                        for res in results[n_seen:]:
                            if "_exit" in res:
                                continue
                            cand = next(x for x in pending if x.id == res["candidate_id"])
                            log_text = _tail(log_path, log_mark)
                            log_mark = log_path.stat().st_size if log_path.exists() else 0
                            if on_raw:
                                on_raw(cand, res)
                            record(cand, to_measurement(res, problem, cand, hardware, log_text))
                        n_seen = len(results)
                    if rc is not None:
                        break
                    now_on = next((x for x in pending if x.id not in done), None)
                    if now_on is not current:  # a new candidate: its own budgets from now
                        current, started = now_on, time.monotonic()
                        if current is not None:
                            budget = PhaseBudget(work / current.id / "phase",
                                                 timeout_s * (3 if current.backend == "cuda" else 1),
                                                 run_timeout_s, started)
                    if current is not None and budget is not None:
                        why = budget.poll()
                        if why is None and time.monotonic() - started > max_wait_s:
                            why = f"no result within {max_wait_s:.0f} s (including waiting for the GPU)"
                        killed_for_timeout = why
                    if killed_for_timeout:
                        try:
                            os.killpg(proc.pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                        proc.wait()
                        break
                    time.sleep(0.05)
                try:
                    os.killpg(proc.pid, signal.SIGKILL)  # anything the candidates left behind
                except (ProcessLookupError, PermissionError):
                    pass
            # Whatever the worker reported after the last poll.
            final = _read_results(results_path)
            for res in final[n_seen:]:
                if "_exit" in res:
                    continue
                cand = next(x for x in pending if x.id == res["candidate_id"])
                if on_raw:
                    on_raw(cand, res)
                record(cand, to_measurement(res, problem, cand, hardware, _tail(log_path, log_mark)))
            left_on_purpose = bool(final) and "_exit" in final[-1] and not killed_for_timeout
            remaining = [c for c in pending if c.id not in done]
            if remaining and not left_on_purpose:
                # The first unfinished candidate is the one the worker was on when it ended.
                victim = remaining[0]
                tail = _tail(log_path, log_mark)
                if killed_for_timeout:
                    status, why = Status.TIMEOUT, f"{killed_for_timeout}; worker killed"
                else:
                    status, why = Status.CRASHED, exit_reason(rc, MAX_LOG_BYTES)
                record(victim, Measurement(candidate_id=victim.id, problem_id=problem.id, hardware_key=hardware.key,
                                           hardware_fingerprint=hardware.fingerprint, status=status, reason=why,
                                           log=tail, hardware_json=json.dumps(hardware.to_dict())))
            pending = [c for c in pending if c.id not in done]
            if not respawn:
                break
    return [done[c.id] for c in candidates if c.id in done]


if __name__ == "__main__":
    _worker_main(sys.argv[1], sys.argv[2])
