"""The executor's side of a job: phase budgets, the verdict from a worker's raw data, and
the Measurement it becomes (see chunked.py for the protocol that delivers the raw data).
"""
from __future__ import annotations

import fcntl
import json
import math
import signal
import time
from pathlib import Path

from workbench.records import Candidate, Hardware, Measurement, Problem, Status

LOG_TAIL_CHARS = 8000


class PhaseBudget:
    """Seconds a job spent per budget, from the phases its worker reports (`set_phase`).

    Phases (see gpu_lock): "" (starting, importing, compiling) and "checking" count against
    the compile+correctness budget `compile_s`; "timing" against `run_s` (None: the compile
    budget); waiting for the GPU ("wait-gpu") against none, but only while another process
    holds the GPU's lock at `lock_path`: a claimed wait while nobody holds it (or with no lock
    at all) counts as compile time, so a stall cannot hide behind a forged phase.
    `poll()` is called often; time between two polls goes to the phase seen at the first.
    """

    _WAIT = ("wait-gpu", "waiting")

    def __init__(self, compile_s: float, run_s: float | None, now: float | None = None,
                 lock_path: str | None = None):
        self.compile_s, self.run_s, self.lock_path = compile_s, run_s, lock_path
        self.spent = {"compile": 0.0, "run": 0.0}
        self.phase = ""
        self._t = time.monotonic() if now is None else now

    def set_phase(self, name: str) -> None:
        self.phase = name

    def _lock_held(self) -> bool:
        if not self.lock_path:
            return False
        try:
            with open(self.lock_path, "a+") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fh, fcntl.LOCK_UN)
            return False
        except BlockingIOError:
            return True
        except OSError:
            return False

    def poll(self, now: float | None = None) -> str | None:
        """Account the time since the last poll; a sentence when a budget has run out, else None."""
        now = time.monotonic() if now is None else now
        dt, self._t = now - self._t, now
        if self.phase == "timing" and self.run_s is not None:
            self.spent["run"] += dt
        elif not (self.phase in self._WAIT and self._lock_held()):
            self.spent["compile"] += dt
        if self.run_s is not None and self.spent["run"] > self.run_s:
            return f"timing took longer than {self.run_s:.0f} s"
        if self.spent["compile"] > self.compile_s:
            if self.run_s is None:
                return f"no result within {self.compile_s:.0f} s (not counting waits for the GPU)"
            return f"compilation and correctness took longer than {self.compile_s:.0f} s"
        return None


_STATUSES = {s.value for s in Status}


def judge(result: dict, out_dir: Path, ref, device: str, floor_ms: float | None, retime=None,
          contract=None) -> dict:
    """The verdict on one job from its worker's raw result and the clean reference (`ref`, a
    reference.ReferenceData; None when the worker's status is not ok).

    A worker can only make its own candidate look worse by what it reports: a non-ok status
    stands; an ok one becomes ok here only when every shipped output matches the reference's
    at the same point (the first seed's at least, and a timed run's when timed), the times
    computed from its samples are finite, the reference timed beside it agrees with the clean
    reference, and the candidate's time is over the roofline floor. Outputs are compared at the
    run's `contract` (`workbench.problems.contract.Contract`; None: the project's rules)."""
    from workbench.execution import guards, reference, tensorfile
    from workbench.execution.timing import summarise

    status = result.get("status")
    if status not in _STATUSES:
        return {"status": "crashed", "reason": f"the worker reported an unknown status {str(status)[:80]!r}"}
    reason = str(result.get("reason", ""))[:4000]
    base = {"compile_s": result.get("compile_s")} if isinstance(result.get("compile_s"), (int, float)) else {}
    if result.get("traceback"):
        base["traceback"] = str(result["traceback"])[-4000:]
    if status != "ok":
        return {"status": status, "reason": reason, **base}
    points = result.get("points")
    if not isinstance(points, dict):
        return {"status": "crashed", "reason": "the worker reported no outputs", **base}
    if ref.check_hashes:
        for name, digest in ref.hashes.items():
            if tensorfile.sha256_file(Path(ref.directory) / name) != digest:
                return {"status": "cheat_suspected", "reason": f"the clean reference's output file {name} "
                        "was changed while candidates ran", **base}
    first = next(iter(ref.points))
    if first not in points:
        return {"status": "crashed", "reason": f"the worker did not ship its output at {first!r}", **base}
    samples = result.get("samples")
    timed = [p for p in points if p.startswith("timed:")]
    if samples is not None and not timed:
        return {"status": "crashed", "reason": "the worker shipped no output of a timed run", **base}
    for point, metas in points.items():
        ref_point = reference.job_point_reference(point)
        if ref_point not in ref.points or not isinstance(metas, list):
            return {"status": "crashed", "reason": f"the worker shipped an output at an unknown point {point!r}",
                    **base}
        k, mm = ref.reduced_k.get(ref_point, 1), ref.matmul_like
        ok, why = tensorfile.compare_files(out_dir, metas, ref.directory, ref.points[ref_point], k, mm, contract)
        if not ok:
            if point.startswith("timed:"):
                return {"status": "cheat_suspected", "reason": f"checked by the executor: a timed run's output "
                        f"differs from the reference ({why}): the candidate computes something else while it "
                        "is timed", **base}
            return {"status": "incorrect", "reason": f"checked by the executor, {point}: {why}", **base}
    if samples is None:
        return {"status": "ok", "reason": "", **base}
    try:
        repeats = [(summarise(r["reference"]), summarise(r["candidate"])) for r in samples]
    except (TypeError, KeyError, ValueError):
        return {"status": "crashed", "reason": "the worker's timing samples are malformed", **base}
    ref_stats, cand_stats = repeats[0]
    if not (cand_stats.median_ms > 0 and math.isfinite(cand_stats.median_ms) and math.isfinite(ref_stats.median_ms)):
        return {"status": "cheat_suspected", "reason": f"candidate time {cand_stats.median_ms!r} ms: the timer did "
                "not measure the candidate's work", **base}
    why = reference.reference_finding(samples[0]["reference"], ref.timing, device)
    if why and retime is not None:
        again = retime()
        if again:
            slower = max((ref.timing, again), key=lambda t: t["median_ms"])
            why = reference.reference_finding(samples[0]["reference"], slower, device)
            if why:
                why += f" (timed alone twice: {ref.timing['median_ms']:.4f} and {again['median_ms']:.4f} ms)"
    if why:
        return {"status": "cheat_suspected", "reason": why, **base}
    why = guards.roofline_finding(cand_stats.median_ms, floor_ms)
    if why:
        return {"status": "cheat_suspected", "reason": why, **base}
    out = {"status": "ok", "reason": "", **base, "reference": ref_stats.to_dict(), "candidate": cand_stats.to_dict(),
           "speedup": ref_stats.median_ms / cand_stats.median_ms,
           "reference_clean_ms": (ref.timing or {}).get("median_ms")}
    if len(repeats) > 1:
        out["repeats"] = [{"reference": r.to_dict(), "candidate": c.to_dict()} for r, c in repeats]
    return out


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
