"""Measure many candidates of one problem in one worker process, replacing it when it dies.

Starting a Python process with torch and a CUDA context costs seconds, more than measuring a
typical candidate, so a chunk worker (`python -m workbench.execution.chunked`, started under
a supervisor, see contain.py) measures the candidates of a chunk one after another.

The verdict is the executor's, not the worker's:
- the worker reads one job at a time on its standard input and answers on its channel
  (protocol.py): "ready", then "phase" messages and exactly one "result" for the job it was
  given, then "ready" again (or "leaving"/"bye"). The parent sends job k+1 only after job k's
  result was confirmed by the next "ready", accepts only the result of the job it sent, and
  records anything else (a second result, another job's id, a malformed frame, a worker that
  dies right after reporting) as a crash of the candidate it was on;
- the worker's result holds raw data only: its outputs at each check point and at randomly
  chosen timed runs (written to files, tensorfile.py) and its timing samples. The parent
  compares those outputs with the outputs of a clean reference process (reference.py), times
  from the samples, checks the reference's time against the clean one, applies the roofline
  floor, and only then records `ok`;
- a worker that dies or overruns a budget of the candidate it is on (compile+correctness,
  timing; a wait for the GPU's lock counts against neither, and a claimed wait while nobody
  holds the lock counts as compile time) costs only that candidate; the unstarted rest of the
  chunk goes to a fresh worker;
- the worker leaves by itself after a candidate that leaves the process suspect (a sticky
  CUDA error, a replaced function, a changed precision flag, a leftover thread or process),
  so no later candidate is measured in a tampered process.
"""
from __future__ import annotations

import gc
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

from workbench.execution import contain, protocol, reference
from workbench.execution.compile_cache import cache_env
from workbench.execution.job import MeasureJob, WorkerJob
from workbench.execution.verdict import PhaseBudget, exit_reason, judge, result_to_measurement
from workbench.records import Candidate, Hardware, Measurement, Problem, Status

LOG_TAIL_CHARS = 6000
MAX_LOG_BYTES = 64 * 2**20         # a worker whose log passes this is stopped (output flood)
FILE_SIZE_LIMIT = 2**30            # RLIMIT_FSIZE of the worker: any one file, shipped outputs included
MAX_SOURCE_BYTES = 1 * 2**20
_STICKY = ("illegal memory access", "device-side assert", "CUDA error", "unspecified launch failure",
           "misaligned address", "an illegal instruction")


# --------------------------------------------------------------------------- worker side
def _worker_main() -> None:
    from workbench.execution import guards
    from workbench.execution.worker import Verdict, run_job

    contain.become_subreaper()
    chan = protocol.CHANNEL_FD
    jobs = protocol.FrameReader(0)
    import torch

    # Full fp32 references: cuDNN would otherwise run fp32 convolutions in TF32, so the
    # reference itself would miss fp32 tolerance. (matmul TF32 is already off by default.)
    torch.backends.cudnn.allow_tf32 = False
    if torch.cuda.is_available():
        torch.empty(1, device="cuda")   # driver and context up before the Landlock domain (writes /proc)
    contain.restrict_self()              # from here on, candidate code may run
    baseline = None
    protocol.send(chan, {"type": "ready"})
    while True:
        msg = jobs.read()
        if msg is None or msg.get("type") != "job":
            protocol.send(chan, {"type": "bye"})
            break
        jid = msg["job_id"]
        job = WorkerJob.from_dict(msg["job"])
        cid = job.candidate_id
        print(f"=== candidate {cid} ===", flush=True)
        t0 = time.time()
        try:
            result = run_job(job, on_phase=lambda name: protocol.send(chan, {"type": "phase", "job_id": jid,
                                                                              "phase": name}))
        except Verdict as v:
            result = {"status": v.status, "reason": v.reason}
        except SystemExit as e:
            result = {"status": "crashed", "reason": f"the candidate called exit({e.code})"}
        except MemoryError:
            result = {"status": "runtime_error", "reason": "out of host memory"}
        except BaseException as e:  # noqa: BLE001
            result = {"status": "runtime_error", "reason": f"{type(e).__name__}: {str(e)[:2000]}",
                      "traceback": traceback.format_exc()[-3000:]}
        result["candidate_id"] = cid
        result.setdefault("compile_s", round(time.time() - t0, 3))
        sys.modules.pop(f"wb_candidate_{cid}", None)
        gc.collect()
        suspect = any(s in str(result.get("reason", "")) for s in _STICKY)
        left = contain.live_children()
        if left:
            contain.kill_descendants()
            if result["status"] == "ok":
                result = {"status": "cheat_suspected", "candidate_id": cid,
                          "reason": f"left {len(left)} process(es) running after it returned"}
            suspect = True
        if baseline is None:
            baseline = guards.RuntimeSnapshot()
        else:
            changes = guards.RuntimeSnapshot().changes_since(baseline)
            if changes and result["status"] == "ok":
                result = {"status": "cheat_suspected", "candidate_id": cid,
                          "reason": "left the process changed: " + "; ".join(changes)}
            suspect = suspect or bool(changes)
        protocol.send(chan, {"type": "result", "job_id": jid, "result": result})
        if suspect:
            # Leave on purpose; the parent runs the rest in a fresh process.
            protocol.send(chan, {"type": "leaving"})
            break
        try:
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except Exception:  # noqa: BLE001
            protocol.send(chan, {"type": "leaving"})
            break
        protocol.send(chan, {"type": "ready"})
    sys.stdout.flush()
    os._exit(0)


# --------------------------------------------------------------------------- parent side
def _tail(path: Path, start: int = 0) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(start, size - LOG_TAIL_CHARS))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _failed(problem: Problem, c: Candidate, hw: Hardware, status: Status, reason: str, log: str = "") -> Measurement:
    return Measurement(candidate_id=c.id, problem_id=problem.id, hardware_key=hw.key,
                       hardware_fingerprint=hw.fingerprint, status=status, reason=reason, log=log,
                       hardware_json=json.dumps(hw.to_dict()))


def _log_start(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def run_chunk(job: MeasureJob, candidates: Sequence[Candidate], *, on_result=None, on_raw=None,
              respawn: bool = True, more=None) -> list[Measurement]:
    """Measure `candidates` (of `job.problem`, distinct ids) in as few worker processes as
    their behaviour allows.

    Returns one Measurement per candidate, in input order; budgets and settings are the job's
    (MeasureJob). `on_result(measurement)` is called as each one is known;
    `on_raw(candidate, result)` with the judged result dict (e.g. the `repeats` of
    `timing_repeats`), when there is one.
    `respawn=False`: return once the first worker process has ended, with Measurements only for
    the candidates it finished or was on (a caller's queue can then spread the rest).
    `more()`: asked when a worker process is ready for another candidate and has none left;
    returns further candidates of `job.problem` for the same process (an empty list lets it
    finish). They are measured like the others, but their Measurements reach `on_result`
    only: the returned list covers `candidates`.
    """
    problem, hardware, device = job.problem, job.hardware, job.device
    pending = list({c.id: c for c in candidates}.values())  # a repeated id is measured once
    done: dict[str, Measurement] = {}

    contract = job.options.contract

    def record(c: Candidate, m: Measurement) -> None:
        # Every record carries the contract it was judged by (precision, tolerance, trials).
        m = m.replace(precision=contract.precision, tolerance=contract.tolerance, trials=contract.trials or 0)
        done[c.id] = m
        if on_result:
            on_result(m)

    for c in list(pending):
        too_big = _oversized(problem, c, hardware)
        if too_big is not None:
            record(c, too_big)
    pending = [c for c in pending if c.id not in done]
    root = str(Path(__file__).resolve().parents[2])
    base_env = dict(os.environ)
    base_env["PYTHONPATH"] = root + (os.pathsep + base_env["PYTHONPATH"] if base_env.get("PYTHONPATH") else "")
    if device == "cpu":
        # One intra-op thread: on a few shared cores, torch's thread pool makes a small
        # reference's wall time depend on what the neighbours do (milliseconds for microseconds).
        base_env.update(TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1")
    elif job.gpu_index is not None:
        base_env["CUDA_VISIBLE_DEVICES"] = str(job.gpu_index)
    spec = reference.spec_for(problem.to_dict(), device, job.options.to_dict(), job.lock_path)
    spec["gpu"] = base_env.get("CUDA_VISIBLE_DEVICES", "")
    abi = contain.landlock_abi()
    if not pending:
        return [done[c.id] for c in candidates if c.id in done]
    ref_key, ref_future = reference.STORE.get(spec, contain.minimal_env(base_env, tempfile.gettempdir()),
                                              max(120.0, 3 * job.timeout_s), check_hashes=abi < 1)
    try:
        while pending:
            with tempfile.TemporaryDirectory(prefix="wb_chunk_") as tmp:
                _one_worker(Path(tmp), job, pending, base_env, abi, ref_future, record, ref_key=ref_key,
                            on_raw=on_raw, more=more)
            pending = [c for c in pending if c.id not in done]
            if not respawn:
                break
    finally:
        reference.STORE.release(ref_key)
    return [done[c.id] for c in candidates if c.id in done]


def _oversized(problem: Problem, c: Candidate, hardware: Hardware) -> Measurement | None:
    """The compile error of a candidate whose source is over MAX_SOURCE_BYTES, else None."""
    size = len(c.source.encode("utf-8", "replace"))
    if size <= MAX_SOURCE_BYTES:
        return None
    return _failed(problem, c, hardware, Status.COMPILE_ERROR,
                   f"the candidate's source is {size} bytes, over the {MAX_SOURCE_BYTES} byte limit")


def _one_worker(work: Path, job: MeasureJob, pending: list[Candidate], base_env: dict, abi: int, ref_future,
                record, *, ref_key: str, on_raw, more=None) -> None:
    """One worker process over `pending` (in order) until it ends; records what it finished
    and the candidate it was on when it died or overran a budget. Candidates that `more()`
    hands over (see run_chunk) are appended to `pending`, so a caller that respawns sees them."""
    problem, hardware, device, lock_path = job.problem, job.hardware, job.device, job.lock_path
    log_path = work / "log.txt"
    first_cuda = next((c for c in pending if c.backend == "cuda"), None)
    build = cache_env(first_cuda or pending[0], hardware, job.cache_root)
    writable = [str(work)] + [d for d in build.values()]
    if lock_path:
        writable.append(os.path.dirname(lock_path))
    for d in writable:
        os.makedirs(d, exist_ok=True)
    env = contain.minimal_env(base_env, work, {**build, "PYTHONUNBUFFERED": "1"})
    ruleset_fd, _ = contain.landlock_ruleset(writable, abi)
    job_r, job_w = os.pipe()
    res_r, res_w = os.pipe()
    argv = contain.supervisor_argv([sys.executable, "-m", "workbench.execution.chunked"], ruleset_fd,
                                   FILE_SIZE_LIMIT, job.cpu_mem_bytes, job.options.worker_cpus, channel_fd=res_w)
    try:
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(argv, stdin=job_r, stdout=log, stderr=subprocess.STDOUT, cwd=str(work),
                                    env=env, pass_fds=tuple(fd for fd in (res_w, ruleset_fd) if fd >= 0),
                                    start_new_session=True, preexec_fn=contain.supervisor_preexec())
    finally:
        for fd in (job_r, res_w, ruleset_fd):
            if fd >= 0:
                os.close(fd)
    reader = protocol.FrameReader(res_r)
    queue = list(pending)
    current: Candidate | None = None
    jid: str | None = None
    held: dict | None = None      # the current job's result, waiting for the worker's confirmation
    budget: PhaseBudget | None = None
    started = time.monotonic()
    log_mark = 0
    ended_why: tuple[Status, str] | None = None
    gone_at = 0.0

    judges = ThreadPoolExecutor(max_workers=2, thread_name_prefix="wb-judge")

    def judge_one(cand: Candidate, res: dict, text: str) -> None:
        out_dir = work / cand.id / "out"
        try:
            ref = ref_future.result() if res.get("status") == "ok" else None
            final = judge(res, out_dir, ref, device, job.roofline_floor_ms, retime=lambda: reference.STORE.retime(ref_key),
                          contract=job.options.contract)
        except reference.ReferenceFailed as e:
            final = {"status": "runtime_error", "reason": str(e)}
        except Exception as e:  # noqa: BLE001 - an executor bug must still yield a record
            final = {"status": "crashed", "reason": f"executor error while judging: {type(e).__name__}: {e}"}
        shutil.rmtree(out_dir, True)
        if on_raw:
            on_raw(cand, final)
        record(cand, result_to_measurement(final, problem, cand, hardware, text))

    def finish_current(res: dict) -> None:
        """Judge the current job in the background: the worker goes on with the next at once."""
        nonlocal current, held, log_mark
        text = _tail(log_path, log_mark)
        log_mark = _log_start(log_path)
        judges.submit(judge_one, current, res, text)
        current, held = None, None

    def send_next() -> bool:
        nonlocal current, jid, budget, started
        while not queue and more is not None:
            extra = [c for c in {c.id: c for c in more()}.values() if c.id not in {x.id for x in pending}]
            if not extra:
                break
            for c in extra:
                too_big = _oversized(problem, c, hardware)
                if too_big is not None:
                    record(c, too_big)
                else:
                    pending.append(c)
                    queue.append(c)
        if not queue:
            protocol.send(job_w, {"type": "finish"})
            return False
        current = queue.pop(0)
        jid = secrets.token_hex(16)
        cdir = work / current.id
        (cdir / "out").mkdir(parents=True, exist_ok=True)
        protocol.send(job_w, {"type": "job", "job_id": jid, "job": job.for_candidate(current, cdir).to_dict()})
        started = time.monotonic()
        budget = PhaseBudget(job.compile_budget_s(current), job.run_timeout_s, started, lock_path=lock_path)
        return True

    try:
        while True:
            try:
                frames = reader.poll(0.05)
            except protocol.ProtocolError as e:
                ended_why = (Status.CRASHED, f"the worker's channel carried a malformed message ({e}); "
                                             "a candidate wrote to it")
                break
            violation = None
            for f in frames:
                kind = f.get("type")
                if kind == "phase" and current is not None and f.get("job_id") == jid and held is None:
                    budget.set_phase(str(f.get("phase", "")))
                elif kind == "result" and current is not None and f.get("job_id") == jid and held is None \
                        and isinstance(f.get("result"), dict):
                    held = f["result"]
                elif kind == "ready" and (current is None or held is not None):
                    if held is not None:
                        finish_current(held)
                    if not send_next():
                        continue
                elif kind in ("leaving", "bye") and (current is None or held is not None):
                    if held is not None:
                        finish_current(held)
                    queue.clear()
                else:
                    violation = f"an unexpected {kind!r} message"
                    break
            if violation:
                ended_why = (Status.CRASHED, f"the worker's channel carried {violation} (a second result, "
                                             "another job's id or a message out of turn): its report is not "
                                             "trusted")
                break
            if proc.poll() is not None and not frames:
                # The worker is gone: stop once its channel is drained (end of file), or a second
                # after its exit should something still hold the channel open.
                gone_at = gone_at or time.monotonic()
                if reader.eof or time.monotonic() - gone_at > 1.0:
                    break
                continue
            if _log_start(log_path) > MAX_LOG_BYTES:
                ended_why = (Status.CRASHED, f"output flood: the log passed {MAX_LOG_BYTES // 2**20} MiB "
                                             "and the worker was stopped")
                break
            if current is not None and held is None and budget is not None:
                why = budget.poll()
                if why is None and time.monotonic() - started > job.max_wait_s:
                    why = f"no result within {job.max_wait_s:.0f} s (including waiting for the GPU)"
                if why:
                    ended_why = (Status.TIMEOUT, f"{why}; worker killed")
                    break
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        judges.shutdown(wait=True)
        for fd in (job_w, res_r):
            try:
                os.close(fd)
            except OSError:
                pass
    if current is None and queue and not ended_why and queue == pending:
        # The worker died before taking its first job: the first candidate pays for it (a fresh
        # worker for the rest), so a worker that cannot start never loops forever.
        current = queue[0]
        ended_why = (Status.CRASHED, "the worker process ended before taking a job "
                                     f"({exit_reason(contain.decode_exit(proc.returncode), MAX_LOG_BYTES)}); "
                                     f"its log: {_tail(log_path)[-600:]}")
    if current is not None:
        tail = _tail(log_path, log_mark)
        if ended_why is None:
            rc = contain.decode_exit(proc.returncode)
            if held is not None:
                ended_why = (Status.CRASHED, "the worker died right after reporting this candidate "
                                             f"({exit_reason(rc, MAX_LOG_BYTES)}): its report is not trusted")
            else:
                ended_why = (Status.CRASHED, exit_reason(rc, MAX_LOG_BYTES))
        record(current, _failed(problem, current, hardware, ended_why[0], ended_why[1], tail))


if __name__ == "__main__":
    _worker_main()
