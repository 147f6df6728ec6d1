"""Measure many candidates of one problem in one worker process, replacing it when it dies.

Starting a Python process with torch and a CUDA context costs seconds, more than measuring a
typical candidate, so a chunk worker (`python -m workbench.execution.chunked`, started under
a supervisor, see contain.py) measures the candidates of a chunk one after another.

The verdict is the executor's, not the worker's:
- the worker reads one job at a time on its standard input and answers on its channel
  (protocol.py): "ready", then "phase" messages, one "gate", and after the judge's session
  (which the parent ends: "end" on its own end of the link) exactly one "result" for the job
  it was given, then "ready" again (or "leaving"/"bye"). The parent sends job k+1 only after
  job k's result was confirmed by the next "ready", accepts only the result of the job it
  sent, and records anything else (a message during the session, a second result, another
  job's id, a malformed frame, a worker that dies right after reporting) as a crash of the
  candidate it was on;
- the worker's result holds no data: when a candidate is built and warmed up the worker
  sends "gate", the parent asks the judge's timer (timer.py, a clean process) for a session,
  and the timer checks and times the candidate through the gate (gate.py) over a link of its
  own to the worker. The parent judges the timer's report (verdict.judge: outputs already
  compared, times from the timer's clock, the reference's time checked against the reference
  timed alone, the roofline floor) and only then records `ok`;
- a worker that dies or overruns a budget of the candidate it is on (compile and warm-up: its
  compile budget; the session: the judge's trials within the compile budget and timed rounds
  within the timing budget; a wait for the GPU's lock counts against neither, and a claimed
  wait while nobody holds the lock counts as compile time) costs only that candidate; the
  unstarted rest of the chunk goes to a fresh worker;
- the worker leaves by itself after a candidate that leaves the process suspect (a sticky
  CUDA error, a replaced function, a changed precision flag, a leftover thread or process),
  and the parent stops it after a candidate whose verdict is cheat_suspected (whatever the
  worker says), so no later candidate is measured in a tampered process.
"""
from __future__ import annotations

import gc
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

from workbench.execution import contain, gpu_lock, protocol, reference
from workbench.execution import template as worker_template
from workbench.execution import timer as judge_timer
from workbench.execution.compile_cache import cache_env
from workbench.execution.scrub import scrub
from workbench.execution.job import MeasureJob, WorkerJob
from workbench.execution.verdict import JUDGING, PhaseBudget, exit_reason, judge, result_to_measurement
from workbench.records import Candidate, Hardware, Measurement, Problem, Status

LOG_TAIL_CHARS = 6000
MAX_LOG_BYTES = 64 * 2**20         # a worker whose log passes this is stopped (output flood)
FILE_SIZE_LIMIT = 2**30            # RLIMIT_FSIZE of the worker: any one file it writes
MAX_SOURCE_BYTES = 1 * 2**20
_STICKY = ("illegal memory access", "device-side assert", "CUDA error", "unspecified launch failure",
           "misaligned address", "an illegal instruction")


# --------------------------------------------------------------------------- worker side
def _worker_main() -> None:
    from workbench.execution import gate, guards
    from workbench.execution.worker import Verdict, make_sync, open_arena, run_job, share_outputs

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
    try:
        link = gate.Link.from_fd(contain.LINK_FD)
    except OSError:
        link = None
    state = gate.WorkerState(open_arena, make_sync, share_outputs())
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
            result = run_job(job, link, state,
                             on_phase=lambda name: protocol.send(chan, {"type": "phase", "job_id": jid, "phase": name}),
                             on_gate=lambda: protocol.send(chan, {"type": "gate", "job_id": jid}))
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
                       hardware_fingerprint=hw.fingerprint, status=status, reason=scrub(reason), log=scrub(log),
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
    `on_raw(candidate, result)` with the judged result dict (the timer's gate times, the
    `repeats` of `timing_repeats`), when there is one.
    `respawn=False`: return once the first worker process has ended, with Measurements only for
    the candidates it finished or was on (a caller's queue can then spread the rest).
    `more()`: asked when a worker process is ready for another candidate and has none left;
    returns further candidates of `job.problem` for the same process (an empty list lets it
    finish). They are measured like the others, but their Measurements reach `on_result`
    only: the returned list covers `candidates`.
    """
    problem, hardware, device = job.problem, job.hardware, job.device
    # Whatever process starts workers (the executor's, a Ray worker's) may hold the user's keys
    # in its environment: no worker may read its /proc entries or memory.
    contain.protect_process()
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
    spec = reference.spec_for(problem.to_dict(), device, job.options.to_dict())
    abi = contain.landlock_abi()
    if not pending:
        return [done[c.id] for c in candidates if c.id in done]
    prep_env = contain.minimal_env({**base_env, "CUDA_VISIBLE_DEVICES": ""}, tempfile.gettempdir())
    ref_key, ref_future = reference.STORE.get(spec, prep_env, max(120.0, 3 * job.timeout_s))
    identity = contain.worker_identity()
    try:
        while pending:
            with tempfile.TemporaryDirectory(prefix="wb_chunk_") as tmp:
                _one_worker(Path(tmp), job, pending, base_env, abi, ref_future, record, ref_key=ref_key,
                            on_raw=on_raw, more=more, identity=identity)
            pending = [c for c in pending if c.id not in done]
            if not respawn:
                break
    finally:
        reference.STORE.release(ref_key)
    return [done[c.id] for c in candidates if c.id in done]


_HANDED: set[str] = set()   # build caches already given to the workers' user


def _hand_over(identity, work: Path, build_dirs: list[str], lock_path: str | None) -> None:
    """Everything a worker running as another user writes: its work directory, the build
    caches, the GPU's lock files (see contain.worker_identity)."""
    if identity is None:
        return
    contain.hand_over([work], identity)
    fresh = [d for d in build_dirs if d not in _HANDED]
    contain.hand_over(fresh, identity, tree=True)
    _HANDED.update(fresh)
    if lock_path:
        from workbench.execution.gpu_lock import turnstile_path

        for f in (lock_path, turnstile_path(lock_path)):
            with open(f, "a"):
                pass
            os.chmod(f, 0o666)
        os.chmod(os.path.dirname(lock_path), 0o755)


def _timed_out(session) -> bool:
    """Whether a finished session's report is a timeout (a worker that did not answer the judge)."""
    try:
        report = session.result()
    except Exception:  # noqa: BLE001 - the executor's end of the session failed: the usual path records it
        return False
    return isinstance(report, dict) and report.get("status") == Status.TIMEOUT.value


def _session_request(job: MeasureJob, ref, ref_key: str, supervisor: int) -> dict:
    """What the timer needs for one candidate's session (timer.Timer.session)."""
    from workbench.execution import timing

    opts = job.options
    if job.device.startswith("cuda"):
        timing_opts = {**timing.CUDA_DEFAULTS, **dict(opts.timing)}
    else:
        timing_opts = {"warmup": 1, "min_runs": 3, "max_runs": 20, "max_total_ms": 2000.0, **dict(opts.cpu_timing)}
    from workbench.execution.session import CHECK_SHARE

    share = opts.check_share if opts.check_share is not None else (CHECK_SHARE if job.device.startswith("cuda") else 1.0)
    return {"key": ref_key, "problem": job.problem.to_dict(), "seeds": list(opts.seeds), "time": bool(opts.time),
            "check_share": float(share),
            "timing": timing_opts, "options": opts.to_dict(), "lock_path": job.lock_path, "supervisor": supervisor,
            "trial_s": float(job.timeout_s), "timing_s": float(job.run_timeout_s or job.timeout_s),
            "prepared": {"shapes": ref.shapes, "reduced_k": ref.reduced_k, "matmul_like": ref.matmul_like}}


def _oversized(problem: Problem, c: Candidate, hardware: Hardware) -> Measurement | None:
    """The compile error of a candidate whose source is over MAX_SOURCE_BYTES, else None."""
    size = len(c.source.encode("utf-8", "replace"))
    if size <= MAX_SOURCE_BYTES:
        return None
    return _failed(problem, c, hardware, Status.COMPILE_ERROR,
                   f"the candidate's source is {size} bytes, over the {MAX_SOURCE_BYTES} byte limit")


def _one_worker(work: Path, job: MeasureJob, pending: list[Candidate], base_env: dict, abi: int, ref_future,
                record, *, ref_key: str, on_raw, more=None, identity=None) -> None:
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
    _hand_over(identity, work, list(build.values()), lock_path)
    env = contain.minimal_env(base_env, work, {**build, "PYTHONUNBUFFERED": "1"})
    ruleset_fd, _ = contain.landlock_ruleset(writable, abi)
    job_r, job_w = os.pipe()
    res_r, res_w = os.pipe()
    link_mine, link_theirs = socket.socketpair()
    link_id = secrets.token_hex(8)
    spec = contain.supervisor_spec(ruleset_fd, FILE_SIZE_LIMIT, job.cpu_mem_bytes, job.options.worker_cpus,
                                   channel_fd=res_w, link_fd=link_theirs.fileno(), identity=identity)
    try:
        with open(log_path, "wb") as log:
            proc = None
            if worker_template.enabled(device):
                proc = worker_template.spawn_worker(env, str(work), spec, {
                    "stdin": job_r, "stdout": log.fileno(), "ruleset": ruleset_fd, "channel": res_w,
                    "link": link_theirs.fileno()})
            if proc is None:
                argv = contain.supervisor_command(spec, [sys.executable, "-m", "workbench.execution.chunked"])
                proc = subprocess.Popen(argv, stdin=job_r, stdout=log, stderr=subprocess.STDOUT, cwd=str(work),
                                        env=env, pass_fds=tuple(fd for fd in (res_w, ruleset_fd, link_theirs.fileno())
                                                                if fd >= 0),
                                        start_new_session=True, preexec_fn=contain.supervisor_preexec())
    finally:
        for fd in (job_r, res_w, ruleset_fd):
            if fd >= 0:
                os.close(fd)
        link_theirs.close()
    timing_cpus = list(job.options.timing_cpus) if job.options.timing_cpus else None
    timer = judge_timer.POOL.timer_for(link_id, device, base_env.get("CUDA_VISIBLE_DEVICES", ""),
                                       contain.minimal_env(base_env, tempfile.gettempdir()), timing_cpus)
    reader = protocol.FrameReader(res_r)
    queue = list(pending)
    current: Candidate | None = None
    jid: str | None = None
    held: dict | None = None      # the current job's result, waiting for the worker's confirmation
    session = None                # the current job's session with the judge (a Future of its report)
    judged = threading.Event()    # set when the current session's report is in, before "end" is sent
    budget: PhaseBudget | None = None
    started = time.monotonic()
    log_mark = 0
    ended_why: tuple[Status, str] | None = None
    gone_at = 0.0
    prepared: dict | None = None

    judges = ThreadPoolExecutor(max_workers=2, thread_name_prefix="wb-judge")
    sessions = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wb-session")

    def run_session(req: dict, done: threading.Event) -> dict:
        """The judge's session, then "end" to the worker (over this process's end of the
        link): the worker may report only after that, so a message before is out of turn."""
        report = timer.session(link_id, link_mine, req)
        done.set()
        try:
            protocol.send(link_mine.fileno(), {"type": "end"})
        except OSError:
            pass
        return report

    def judge_one(cand: Candidate, res: dict, text: str, sess) -> None:
        try:
            report = sess.result() if sess is not None else None
            final = judge(res, report, device, job.roofline_floor_ms)
        except Exception as e:  # noqa: BLE001 - an executor bug must still yield a record
            final = {"status": "crashed", "reason": f"executor error while judging: {type(e).__name__}: {e}"}
        shutil.rmtree(work / cand.id, True)
        if on_raw:
            on_raw(cand, final)
        record(cand, result_to_measurement(final, problem, cand, hardware, text))

    def caught(res: dict) -> bool:
        """Whether the current candidate's verdict is cheat_suspected (then the rest of the
        chunk goes to a fresh worker)."""
        try:
            report = session.result() if session is not None and session.done() else None
            return judge(res, report, device, job.roofline_floor_ms)["status"] == "cheat_suspected"
        except Exception:  # noqa: BLE001 - judge_one records the error; a fresh worker is the safe side
            return True

    def finish_current(res: dict) -> None:
        """Judge the current job in the background: the worker goes on with the next at once."""
        nonlocal current, held, log_mark, session
        text = _tail(log_path, log_mark)
        log_mark = _log_start(log_path)
        judges.submit(judge_one, current, res, text, session)
        current, held, session = None, None, None

    def send_next() -> bool:
        nonlocal current, jid, budget, started, prepared
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
        if prepared is None:
            try:
                ref = ref_future.result()
            except reference.ReferenceFailed as e:
                for c in queue:
                    record(c, _failed(problem, c, hardware, Status.RUNTIME_ERROR, str(e)))
                queue.clear()
                protocol.send(job_w, {"type": "finish"})
                return False
            prepared = {"shapes": ref.shapes, "weights": ref.weights, "ref": ref}
        current = queue.pop(0)
        jid = secrets.token_hex(16)
        cdir = work / current.id
        cdir.mkdir(parents=True, exist_ok=True)
        contain.hand_over([cdir], identity)
        wj = job.for_candidate(current, cdir, {"shapes": prepared["shapes"], "weights": prepared["weights"]})
        protocol.send(job_w, {"type": "job", "job_id": jid, "job": wj.to_dict()})
        started = time.monotonic()
        budget = PhaseBudget(job.compile_budget_s(current), job.run_timeout_s, started, lock_path=lock_path)
        return True

    timer.workers.add(proc.pid)     # stopped by sessions of other workers while the GPU is not idle
    try:
        while True:
            try:
                frames = reader.poll(0.05)
            except protocol.ProtocolError as e:
                ended_why = (Status.CRASHED, f"the worker's channel carried a malformed message ({e}); "
                                             "a candidate wrote to it")
                break
            violation = None
            retire = False
            for f in frames:
                kind = f.get("type")
                if session is not None and not judged.is_set():
                    violation = f"a {kind!r} message during the judge's session"
                    break
                if kind == "phase" and current is not None and f.get("job_id") == jid and held is None:
                    # A worker only waits for the GPU or checks (warms up); any other name counts
                    # as compile time, so no name it sends can stop its budget's clock.
                    name = str(f.get("phase", ""))
                    budget.set_phase(name if name in (gpu_lock.WAITING, gpu_lock.CHECKING) else "")
                elif kind == "gate" and current is not None and f.get("job_id") == jid and held is None \
                        and session is None:
                    req = _session_request(job, prepared["ref"], ref_key, proc.pid)
                    judged = threading.Event()
                    session = sessions.submit(run_session, req, judged)
                    budget.set_phase(JUDGING)
                elif kind == "result" and current is not None and f.get("job_id") == jid and held is None \
                        and isinstance(f.get("result"), dict):
                    held = f["result"]
                elif kind == "ready" and (current is None or held is not None):
                    if held is not None:
                        tainted = caught(held)
                        finish_current(held)
                        if tainted:
                            # Caught cheating: what it may have left in this process (a patched
                            # module, a thread, GPU work) must not meet the next candidate.
                            queue.clear()
                            retire = True
                            break
                    if not send_next():
                        continue
                elif kind in ("leaving", "bye") and (current is None or held is not None):
                    if held is not None:
                        finish_current(held)
                    queue.clear()
                else:
                    violation = f"an unexpected {kind!r} message"
                    break
            if retire:
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
                if session is not None and session.done() and budget.phase == JUDGING:
                    budget.set_phase("")   # the session is over: reporting counts against the compile budget
                    if _timed_out(session):
                        # The worker did not answer the judge within the timing budget: it is
                        # stuck in the candidate and will not report; the judge's verdict stands.
                        ended_why = (Status.TIMEOUT, "the judge's session timed out; worker killed")
                        break
                why = budget.poll()
                if why is None and time.monotonic() - started > job.max_wait_s:
                    why = f"no result within {job.max_wait_s:.0f} s (including waiting for the GPU)"
                if why:
                    ended_why = (Status.TIMEOUT, f"{why}; worker killed")
                    break
    finally:
        timer.workers.discard(proc.pid)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        judges.shutdown(wait=True)
        sessions.shutdown(wait=True)
        judge_timer.POOL.release(link_id)
        link_mine.close()
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
        report = session.result() if session is not None and session.done() else None
        if report and report.get("status") in {x.value for x in Status} - {"ok"} and (
                ended_why is None or ended_why[0] is Status.TIMEOUT):
            # The judge's finding says more than a stalled worker's budget (a protocol
            # violation the executor saw itself says more than either).
            ended_why = (Status(report["status"]), str(report.get("reason", "")))
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
