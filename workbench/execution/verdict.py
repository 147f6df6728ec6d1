"""The executor's side of a job: phase budgets, the verdict from the judge's report, and the
Measurement it becomes (see chunked.py for the protocol, timer.py and session.py for the
judge that checks and times the candidate).
"""
from __future__ import annotations

import fcntl
import json
import math
import signal
import time

from workbench.records import Candidate, Hardware, Measurement, Problem, Status

LOG_TAIL_CHARS = 8000
#: The budget phase while the judge's session runs (see PhaseBudget).
JUDGING = "\x00judging"
#: With the candidate stopped, the timer's fixed work taking this many times longer than when
#: the timer started means another process keeps the GPU busy: the candidate's leftover work.
BUSY_RATIO = 1.5
#: On a GPU, a reference slower beside the candidate than alone (twice), with the GPU idle once
#: the candidate is stopped, by at most this factor: not a verdict of cheating (a heavy honest
#: kernel can lower the GPU's clocks, under its power and thermal limits, for the reference that
#: follows it; docs/measuring.md has the cases seen). Such a run is ok, and its speedup is taken
#: against the reference timed alone (the faster of the two), so the slowdown cannot raise it.
#: Further out it stays cheat_suspected.
SLOWED_MAX = 1.5


class PhaseBudget:
    """Seconds a job spent per budget, from the phases its worker reports (`set_phase`).

    Phases (see gpu_lock): "" (starting, importing, compiling) and "checking" count against
    the compile+correctness budget `compile_s`; "timing" against `run_s` (None: the compile
    budget); waiting for the GPU ("wait-gpu") against none, but only while another process
    holds the GPU's lock at `lock_path`: a claimed wait while nobody holds it (or with no lock
    at all) counts as compile time, so a stall cannot hide behind a forged phase. JUDGING
    (set by the executor, never by a worker, while the judge's session runs: the timer keeps
    its own deadline) counts against none.
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
        if self.phase == JUDGING:
            pass
        elif self.phase == "timing" and self.run_s is not None:
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


def _net(stats, null_ms: float, batch: int = 1):
    """`stats` (TimingStats of batches of `batch` calls) less the gate's own cost `null_ms`,
    per call."""
    from workbench.execution.timing import TimingStats

    mean = stats.mean_ms - null_ms
    cv = stats.cv_pct * stats.mean_ms / mean if mean > 0 else 0.0
    return TimingStats((stats.median_ms - null_ms) / batch, (stats.ci_low_ms - null_ms) / batch,
                       (stats.ci_high_ms - null_ms) / batch, mean / batch, cv, stats.runs)


def _alone_net(alone: dict, batch: int) -> float | None:
    """The reference timed alone, per call less the gate's cost (its own null calls)."""
    from workbench.execution.session import finite
    from workbench.execution.timing import summarise

    if not (finite(alone.get("reference") or []) and finite(alone.get("null") or [])):
        return None
    return _net(summarise(alone["reference"]), summarise(alone["null"]).median_ms, batch).median_ms


def _samples_ok(samples) -> bool:
    return (isinstance(samples, dict) and all(
        isinstance(samples.get(k), list) and samples[k] and all(isinstance(x, (int, float)) and math.isfinite(x)
                                                               for x in samples[k])
        for k in ("reference", "candidate", "null")))


def judge(result: dict, report: dict | None, device: str, floor_ms: float | None) -> dict:
    """The verdict on one job from its worker's result and the judge's session report
    (timer.py; None when the worker never reached the judge).

    The worker can only make its own candidate look worse: a non-ok status stands. The
    judge's report is trusted (it comes from a clean process): a non-ok status there stands
    too. An ok verdict needs both ok, and then: gate times that are finite; the reference
    beside the candidate no slower than the reference timed alone (a second look with the
    candidate stopped before a flag: is the GPU busy with its work, is the reference slow
    alone too); the candidate's time over the roofline floor. Times are the gate's samples (a
    batch of `report["batch"]` calls each) less the median of the null calls (the gate's own
    cost), per call; when either net median is not positive, the gate-to-gate times per call
    are reported."""
    from workbench.execution import guards, reference
    from workbench.execution.gate import MAX_BATCH
    from workbench.execution.timing import summarise

    status = result.get("status")
    if status not in _STATUSES:
        return {"status": "crashed", "reason": f"the worker reported an unknown status {str(status)[:80]!r}"}
    reason = str(result.get("reason", ""))[:4000]
    base = {"compile_s": result.get("compile_s")} if isinstance(result.get("compile_s"), (int, float)) else {}
    if result.get("traceback"):
        base["traceback"] = str(result["traceback"])[-4000:]
    if report is not None and report.get("status") not in ("ok", None):
        rs = report.get("status")
        if rs not in _STATUSES:
            return {"status": "crashed", "reason": f"the judge reported an unknown status {str(rs)[:80]!r}", **base}
        return {"status": rs, "reason": str(report.get("reason", ""))[:4000], **base}
    if status != "ok":
        return {"status": status, "reason": reason, **base}
    if report is None:
        return {"status": "crashed", "reason": "the worker reported a result without a session with the judge", **base}
    samples = report.get("samples")
    if samples is None:
        return {"status": "ok", "reason": "", **base, "checked": report.get("checked")}
    if not _samples_ok(samples):
        return {"status": "crashed", "reason": "the judge's timing samples are malformed", **base}
    ref_g, cand_g, null_g = (summarise(samples[k]) for k in ("reference", "candidate", "null"))
    alone = report.get("alone") or {}
    alone_stats = summarise(alone["reference"]).to_dict() if alone.get("reference") else None
    why = reference.reference_finding(samples["reference"], alone_stats, device)
    against, why_ok = None, None     # the alone timing the speedup is taken against, and why
    if why:
        busy = report.get("busy_ratio")
        if isinstance(busy, (int, float)) and busy > BUSY_RATIO:
            return {"status": "cheat_suspected", "reason": f"{why}; with the candidate's processes stopped the GPU "
                    f"was still busy ({busy:.1f}x the judge's own work time): work the candidate left running", **base}
        again = (report.get("retime") or {}).get("reference")
        if again:
            again_stats = summarise(again).to_dict()
            slower = max((alone_stats, again_stats), key=lambda t: t["median_ms"])
            slowed = reference.reference_slowdown(samples["reference"], slower, device)
            why = None
            if slowed:
                twice = f" (timed alone twice: {alone_stats['median_ms']:.4f} and {again_stats['median_ms']:.4f} ms)"
                if device.startswith("cuda") and ref_g.median_ms <= SLOWED_MAX * slower["median_ms"]:
                    faster = min((alone, report["retime"]), key=lambda a: summarise(a["reference"]).median_ms)
                    if _alone_net(faster, 1) is not None:
                        against = faster
                why = slowed + twice if against is not None else f"{slowed}: {reference.BLAME}{twice}"
        if why and against is not None:
            mhz = report.get("sm_mhz") or {}
            if isinstance(mhz.get("beside"), (int, float)) and isinstance(mhz.get("alone"), (int, float)):
                why += f"; SM clock {mhz['beside']:.0f} MHz beside the candidate, {mhz['alone']:.0f} MHz alone"
            why = f"speedup against the reference timed alone: {why}"
            why_ok, why = why, None
    if why:
        return {"status": "cheat_suspected", "reason": why, **base}
    null_ms = null_g.median_ms
    batch = report.get("batch", 1)
    if not isinstance(batch, int) or isinstance(batch, bool) or not 1 <= batch <= MAX_BATCH:
        return {"status": "crashed", "reason": "the judge's report names a malformed batch", **base}
    ref_s, cand_s = _net(ref_g, null_ms, batch), _net(cand_g, null_ms, batch)
    note = ""
    if not (ref_s.median_ms > 0 and cand_s.median_ms > 0):
        ref_s, cand_s = _net(ref_g, 0.0, batch), _net(cand_g, 0.0, batch)
        note = "; gate-to-gate times (a call about as short as the gate's own cost)"
    if against is not None:
        alone_ref = summarise(against["reference"])
        ref_s = _net(alone_ref, 0.0 if note else summarise(against["null"]).median_ms, batch)
    # The floor is a backstop against work not done: judged on the candidate's time less the
    # gate's cost at its smallest (a null call slowed by the host, as on a loaded machine,
    # must not push an honest kernel near the roofline under it).
    low_null = min(samples["null"])
    floor_cand = (cand_g.median_ms - low_null) / batch
    why = guards.roofline_finding(max(cand_s.median_ms, floor_cand), floor_ms)
    if why:
        return {"status": "cheat_suspected", "reason": why, **base}
    if why_ok:
        note = f"; {why_ok}{note}"
    out = {"status": "ok", "reason": note.lstrip("; "), **base, "reference": ref_s.to_dict(),
           "candidate": cand_s.to_dict(), "speedup": ref_s.median_ms / cand_s.median_ms,
           "gate_ms": {"reference": ref_g.median_ms, "candidate": cand_g.median_ms, "null": null_ms}, "batch": batch,
           "reference_alone_ms": _alone_net(alone, batch),
           "checked": report.get("checked"), "self_ms": report.get("self_ms")}
    if isinstance(report.get("phases_s"), dict):
        out["phases_s"] = report["phases_s"]
    if report.get("repeats"):
        reps = []
        for r in report["repeats"]:
            if not _samples_ok(r):
                continue
            n = summarise(r["null"]).median_ms
            reps.append({"reference": _net(summarise(r["reference"]), n, batch).to_dict(),
                         "candidate": _net(summarise(r["candidate"]), n, batch).to_dict()})
        out["repeats"] = reps
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
    from workbench.execution.scrub import scrub

    status = Status(result["status"])
    if result.get("traceback"):
        log = (log + "\n" + result["traceback"])[-LOG_TAIL_CHARS:]
    log = scrub(log)
    if status is not Status.OK or "candidate" not in result:
        return Measurement(status=status, reason=scrub(result.get("reason", "")), log=log,
                           compile_s=result.get("compile_s", elapsed), **base)
    r, c = result["reference"], result["candidate"]
    return Measurement(
        status=Status.OK, reference_ms=r["median_ms"], reference_ci_low_ms=r["ci_low_ms"],
        reference_ci_high_ms=r["ci_high_ms"], reference_runs=r["runs"], candidate_ms=c["median_ms"],
        candidate_ci_low_ms=c["ci_low_ms"], candidate_ci_high_ms=c["ci_high_ms"], candidate_runs=c["runs"],
        speedup=result["speedup"], compile_s=result.get("compile_s"),
        reason=(f"timing cv: reference {r['cv_pct']:.2f}%, candidate {c['cv_pct']:.2f}%"
                + (f"; {result['reason']}" if result.get("reason") else "")),
        log=log, **base)
