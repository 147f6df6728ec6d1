"""The judge's timer: a clean process per device that checks and times every candidate.

`python -m workbench.execution.timer --serve CTRL_FD` never imports candidate code. It starts
one clean reference worker (worker.reference_main: the problem's own Model behind the gate),
and for each session the executor asks for it runs session.Session against the candidate's
chunk worker, through the gate (gate.py; on a GPU gate_cuda.py), holding the GPU's lock
exclusive: correctness trials and timed rounds on inputs it draws, times from its own clock,
outputs compared here at the run's contract (precision and tolerance from the executor's
options: `workbench.problems.contract`). It reports to the executor, never through the
candidate's worker.

    executor ──ctrl socket──▶ timer ──link──▶ reference worker (clean)
        │                       └───link──▶ candidate's chunk worker (one link per worker,
        └── the link's other end, passed with SCM_RIGHTS on the worker's first session)

The executor's side is `Timer` (one timer process; sessions one at a time, restarted when it
dies or its device work is stuck) and `POOL` (timers per device and GPU for this process).
The timer and its reference worker make themselves non-dumpable: no other process of the
user can read their memory, descriptors or inputs to come.
"""
from __future__ import annotations

import atexit
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any


#: Problems a timer keeps ready (reference models built, arenas allocated); least recent first out.
KEEP_PROBLEMS = 4
#: Seconds a session waits for the GPU to go idle with every other worker stopped.
IDLE_WAIT_S = 20.0


# --------------------------------------------------------------------------- the timer process
def read_registry(path: str | None) -> set[int]:
    """Supervisor pids in the executor's worker registry (WorkerRegistry's file); empty when
    there is none or it cannot be read."""
    if not path:
        return set()
    try:
        return {int(x) for x in Path(path).read_text().split() if x.isdigit()}
    except OSError:
        return set()


class Others:
    """The executor's other workers on this device, which a session stops while it needs the
    GPU to itself: those the request named and, read again at every `freeze`, every worker the
    executor registered since (`registry`, WorkerRegistry's file). A worker started while a
    session runs (its candidate's import and threads run before it ever asks for a session) is
    stopped by the next freeze, so work it starts cannot slow the reference that another
    candidate's speedup is taken against. `freezer(pid)` makes the per-worker freezers
    (gate.Freezer: every process below the supervisor)."""

    def __init__(self, freezer, named, registry: str | None = None, exclude: int | None = None):
        self._freezer, self.registry, self.exclude = freezer, registry, exclude
        self.named = {int(p) for p in named or []}
        self.freezers: dict[int, Any] = {}
        self.frozen = False

    def _refresh(self) -> None:
        for pid in sorted((self.named | read_registry(self.registry)) - {self.exclude} - set(self.freezers)):
            self.freezers[pid] = self._freezer(pid)

    def __bool__(self) -> bool:
        self._refresh()
        return bool(self.freezers)

    def freeze(self) -> None:
        self._refresh()
        for f in self.freezers.values():
            f.freeze()
        self.frozen = True

    def keep(self) -> None:
        """While frozen: stop what started since the last freeze (a session calls it each round)."""
        if self.frozen:
            self.freeze()

    def thaw(self) -> None:
        self.frozen = False
        for f in self.freezers.values():
            f.thaw()


class _Server:
    def __init__(self, ctrl, device: str, timing_cpus: list[int] | None, registry: str | None = None):
        import torch

        from workbench.execution import contain, gate

        contain.protect_process()
        self.ctrl, self.device, self.cpus = ctrl, device, timing_cpus
        self.registry = registry
        if timing_cpus and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, timing_cpus)
        self.cuda = device.startswith("cuda")
        torch.backends.cudnn.allow_tf32 = False
        self.busy = self.sm_clock = None
        if self.cuda:
            from workbench.execution import gate_cuda
            from workbench.execution.timing import L2Flusher

            self.spin = gate_cuda.Spin()
            self.flush = L2Flusher(torch.device("cuda"))
            probe = gate_cuda.BusyProbe(self.flush)
            self.busy = probe.ratio
            self.sm_clock = gate_cuda.SmClock().read
        self.gate = gate
        self.ref = None
        self.ref_proc: subprocess.Popen | None = None
        self.links: dict[str, Any] = {}
        self.problems: OrderedDict[str, Any] = OrderedDict()

    def _clock(self):
        if self.cuda:
            from workbench.execution.gate_cuda import CudaClock

            return CudaClock(self.spin, self.flush)
        return self.gate.HostClock()

    def _imports(self):
        if self.cuda:
            from workbench.execution.gate_cuda import Imports

            return Imports()
        return None

    def _arena(self, nbytes: int):
        if self.cuda:
            from workbench.execution.gate_cuda import DeviceArena

            return DeviceArena(nbytes)
        return self.gate.HostArena(nbytes)

    def _start_ref(self) -> None:
        from workbench.execution.session import Endpoint

        mine, theirs = socket.socketpair()
        cpus = self.cpus

        def pre() -> None:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)   # die with the timer
            if cpus and hasattr(os, "sched_setaffinity"):
                os.sched_setaffinity(0, cpus)
        self.ref_proc = subprocess.Popen([sys.executable, "-m", "workbench.execution.worker", "--reference",
                                          str(theirs.fileno())], pass_fds=(theirs.fileno(),), preexec_fn=pre)
        theirs.close()
        link = self.gate.Link(mine)
        msg = link.recv(300.0)
        if msg.get("type") != "ready":
            raise RuntimeError(f"the reference worker did not start: {msg}")
        self.ref = Endpoint(link, self._clock(), self._arena, None, who="reference", imports=self._imports())
        self.ref.pid = self.ref_proc.pid
        self.problems.clear()

    def _stop_ref(self) -> None:
        if self.ref_proc is not None:
            self.ref_proc.kill()
            self.ref_proc.wait()
        if self.ref is not None:
            self.ref.close()
        self.ref, self.ref_proc = None, None
        self.problems.clear()

    def _problem(self, req: dict, deadline: float):
        from workbench.execution.session import Finding, Problem
        from workbench.execution.worker import load_shape

        key = req["key"]
        if key in self.problems:
            self.problems.move_to_end(key)
            return self.problems[key]
        while len(self.problems) >= KEEP_PROBLEMS:
            old, _ = self.problems.popitem(last=False)
            if self.ref.imports is not None:
                self.ref.imports.close()     # unmapped here before the reference worker frees them
            self.ref.link.send({"type": "drop", "key": old})
            self.ref._expect("dropped", deadline)
            arena, _ = self.ref.arenas.pop(old)
            arena.close()
        prep = req["prepared"]
        self.ref.link.send({"type": "problem", "key": key, "problem": req["problem"], "shapes": prep["shapes"],
                            "seed": int(req["seeds"][0]), "device": self.device})
        msg = self.ref._recv(deadline)
        if msg.get("type") != "problem-ok":
            raise Finding("runtime_error", "the reference failed in the judge's clean worker: "
                          + str(msg.get("error", msg.get("type")))[:3000])
        shapes = {name: load_shape(req["problem"], spec) for name, spec in prep["shapes"].items()}
        prob = Problem(key, shapes, msg["outputs"], {k: int(v) for k, v in prep["reduced_k"].items()},
                       bool(prep.get("matmul_like")), self.device)
        self.ref.setup(key, prob.ref_layout, deadline)
        self.problems[key] = prob
        return prob

    def session(self, req: dict) -> dict:
        from workbench.execution.gpu_lock import GpuLock
        from workbench.execution.session import Endpoint, Finding, Session
        from workbench.problems.contract import Contract

        t0 = time.monotonic()
        deadline = t0 + float(req["trial_s"])
        link_id = req["link"]
        # Wall seconds of the timer's own parts around the session (its phases_s gets them).
        around: dict[str, float] = {}
        cand = self.links.get(link_id)
        if cand is None:
            self.ctrl.send({"type": "send-fds"})
            (fd,) = self.ctrl.recv_fds(1)
            cand = Endpoint(self.gate.Link.from_fd(fd), self._clock(), self._arena,
                            self.gate.Freezer(req.get("supervisor")), who="candidate", imports=self._imports())
            self.links[link_id] = cand
        if cand.broken:
            return {"status": "crashed", "reason": f"the link to this worker was broken earlier ({cand.broken})"}
        worker = self._worker_pid(req.get("supervisor"))
        saved = None
        try:
            if self.ref is None or self.ref_proc is None or self.ref_proc.poll() is not None:
                self._stop_ref()
                self._start_ref()
            prob = self._problem(req, deadline)
            cand.setup(prob.key, prob.cand_layout, deadline)
            if self.cpus and worker and hasattr(os, "sched_setaffinity"):
                try:
                    saved = os.sched_getaffinity(worker)
                    os.sched_setaffinity(worker, self.cpus)
                except OSError:
                    saved = None
            # The run's contract (tolerance, trials) from the executor's options, never from a worker.
            contract = Contract.from_options(req.get("options") or {"seeds": req["seeds"]})
            repeats = int((req.get("options") or {}).get("timing_repeats", 1))

            others = Others(self.gate.Freezer, req.get("others"), self.registry, req.get("supervisor"))

            def run() -> dict:
                return Session(prob, cand, self.ref, req["seeds"], req["timing"], deadline,
                               busy=self.busy, repeats=repeats, check_share=float(req.get("check_share", 0.5)),
                               timing_s=float(req["timing_s"]), contract=contract, clock=self.sm_clock,
                               quiet=(lambda: self._idle(cand, others)) if self.busy is not None else None,
                               hold=others.keep).run(
                                   time_it=bool(req.get("time", True)))

            around["setup"] = time.monotonic() - t0
            t1 = time.monotonic()
            with GpuLock(req.get("lock_path") if self.cuda else None).exclusive():
                around["lock"] = time.monotonic() - t1
                report = self._quiet_session(run, cand, others)
        except Finding as f:
            report = {"status": f.status, "reason": f.reason}
        finally:
            if saved:
                try:
                    os.sched_setaffinity(worker, saved)
                except OSError:
                    pass
        # The executor ends the worker's session ("end" on its own end of the link) once it
        # holds this report, so any message the worker sends before is out of turn.
        if self.ref is not None and self.ref.broken:
            report["reason"] = (report.get("reason", "") + f" (the reference worker was restarted: {self.ref.broken})")
            self._stop_ref()
        report["restart"] = "stuck" in (cand.broken, getattr(self.ref, "broken", ""))
        if isinstance(report.get("phases_s"), dict):
            report["phases_s"].update({k: round(v, 4) for k, v in around.items()},
                                      session=round(time.monotonic() - t0, 4))
        return report

    def _idle(self, cand, others: Others) -> float | None:
        """With every other worker and the candidate stopped: wait until the busy probe calls
        the GPU idle. None when it is, else the last busy ratio (after IDLE_WAIT_S seconds).
        The others stay stopped (the caller thaws them)."""
        from workbench.execution.verdict import BUSY_RATIO

        others.freeze()
        if cand.freezer is not None:
            cand.freezer.freeze()
        try:
            end = time.monotonic() + IDLE_WAIT_S
            while True:
                ratio = self.busy()
                if ratio <= BUSY_RATIO:
                    return None
                if time.monotonic() > end:
                    return ratio
                time.sleep(0.05)
                others.keep()
        finally:
            if cand.freezer is not None:
                cand.freezer.thaw()

    def _quiet_session(self, run, cand, others: Others) -> dict:
        """`run()` (the session) on a GPU no other process is using. Another worker of the
        executor may have left work on the GPU (its own attack, or its candidate's leftovers),
        which would slow this session's reference and be blamed on this candidate. So: when
        the busy probe finds the GPU busy before the session, every other worker is stopped
        (and kept stopped through it) until the GPU is idle; when a session run with the others
        going ends with a slowed reference, it is run once more with them stopped, and that
        run's report stands. A GPU that stays busy with everyone stopped for IDLE_WAIT_S is
        reported as such (not the candidate's verdict). While the others are stopped, workers
        the executor starts meanwhile are stopped too (Others.keep, each round)."""
        from workbench.execution.verdict import BUSY_RATIO

        if self.busy is None:
            return run()
        try:
            stopped = False
            if self.busy() > BUSY_RATIO:
                stopped = True
                ratio = self._idle(cand, others)
                if ratio is not None:
                    return {"status": "timeout", "reason": f"the GPU stayed busy ({ratio:.1f}x the judge's own work "
                            f"time) for {IDLE_WAIT_S:.0f} s before the session with every worker of the executor "
                            "stopped: another process is using it"}
            report = run()
            if "retime" in report and not stopped and others:
                first = report.get("reason") or "the reference was slower beside the candidate than alone"
                ratio = self._idle(cand, others)
                if ratio is None:
                    report = run()
                    report["rerun"] = f"run again with the executor's other workers stopped after: {first}"[:1000]
            return report
        finally:
            others.thaw()

    @staticmethod
    def _worker_pid(supervisor: int | None) -> int | None:
        from workbench.execution.contain import _children

        kids = _children(supervisor) if supervisor else []
        return min(kids) if kids else None

    def close(self, links: list[str]) -> None:
        for link_id in links:
            ep = self.links.pop(link_id, None)
            if ep is not None:
                ep.close()

    def serve(self) -> int:
        try:
            self._start_ref()      # ready before the first session asks
        except Exception:  # noqa: BLE001 - the first session starts it again and reports the failure
            self._stop_ref()
        while True:
            try:
                msg = self.ctrl.recv(None)
            except Exception:  # noqa: BLE001 - the executor went away
                break
            kind = msg.get("type")
            if kind == "session":
                try:
                    report = self.session(msg)
                except Exception as e:  # noqa: BLE001 - a timer bug must still answer
                    import traceback

                    report = {"status": "crashed", "reason": f"judge error: {type(e).__name__}: {e}",
                              "traceback": traceback.format_exc()[-3000:], "restart": True}
                self.ctrl.send({"type": "report", "id": msg.get("id"), "report": report})
                if report.get("restart"):
                    break
            elif kind == "close":
                self.close(list(msg.get("links", [])))
                self.ctrl.send({"type": "closed"})
            else:
                break
        self._stop_ref()
        return 0


def _serve_main(fd: int, device: str, cpus: str, registry: str = "") -> int:
    from workbench.execution.gate import Link

    return _Server(Link.from_fd(fd), device, [int(c) for c in cpus.split(",") if c] or None, registry or None).serve()


# --------------------------------------------------------------------------- the executor's side
class JudgeFailed(Exception):
    """The timer process failed (not the candidate): its session is reported as crashed."""


class WorkerRegistry:
    """Supervisor pids of the executor's live workers on one device, kept in a file the timer
    process reads again whenever it stops the others (Others): a set whose every change is
    written at once (a whole new file put in place, so a reader never sees half of one)."""

    def __init__(self, path: str):
        self.path = path
        self._pids: set[int] = set()
        self._lock = threading.Lock()
        self._write()

    def _write(self) -> None:
        tmp = f"{self.path}.{threading.get_ident()}.tmp"
        with open(tmp, "w") as fh:
            fh.write(" ".join(map(str, sorted(self._pids))))
        os.replace(tmp, self.path)

    def add(self, pid: int) -> None:
        with self._lock:
            self._pids.add(int(pid))
            self._write()

    def discard(self, pid: int) -> None:
        with self._lock:
            self._pids.discard(int(pid))
            self._write()

    def __iter__(self):
        with self._lock:
            return iter(sorted(self._pids))


class Timer:
    """One timer process for `device` (restarted on its next use when it died); `session` is
    thread-safe and runs one session at a time."""

    def __init__(self, device: str, env: dict[str, str], log_dir: str, timing_cpus: list[int] | None = None):
        self.device, self.env, self.log_dir, self.cpus = device, env, log_dir, timing_cpus
        self._lock = threading.Lock()
        self._closing_lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.ctrl = None
        self.known: set[str] = set()
        self._closing: list[str] = []
        self.interfered = False
        # Supervisor pids of the executor's live workers on this device (chunked._one_worker
        # adds and removes them): the others a session may stop while the GPU is not idle.
        self.workers = WorkerRegistry(os.path.join(log_dir, f"workers-{os.getpid()}-{id(self)}"))

    def _start(self) -> None:
        from workbench.execution.gate import Link

        root = str(Path(__file__).resolve().parents[2])
        env = dict(self.env, PYTHONUNBUFFERED="1")
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        mine, theirs = socket.socketpair()
        log = open(os.path.join(self.log_dir, f"timer-{os.getpid()}-{id(self)}.log"), "ab")
        cpus = ",".join(map(str, self.cpus or []))
        self.proc = subprocess.Popen([sys.executable, "-m", "workbench.execution.timer", "--serve",
                                      str(theirs.fileno()), self.device, cpus, self.workers.path],
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                                     pass_fds=(theirs.fileno(),), start_new_session=True)
        log.close()
        theirs.close()
        self.ctrl = Link(mine)
        self.known = set()         # a new process knows no link: each is handed over again

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.ctrl.close()
        self.proc = None

    def _alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close_link(self, link_id: str) -> None:
        """The worker of `link_id` is gone: the timer may free its arena (sent with the next
        request; never waits for a session that runs now)."""
        with self._closing_lock:
            self._closing.append(link_id)

    def _flush_closing(self) -> None:
        with self._closing_lock:
            links = [x for x in self._closing if x in self.known]
            self._closing = []
        self.known.difference_update(links)
        if links and self._alive():
            self.ctrl.send({"type": "close", "links": links})
            self._reply("closed", time.monotonic() + 60)

    def _reply(self, kind: str, deadline: float) -> dict:
        from workbench.execution.gate import LinkTimeout
        from workbench.execution.session import _stopped

        while True:
            try:
                msg = self.ctrl.recv(min(1.0, max(0.05, deadline - time.monotonic())))
            except LinkTimeout as e:
                if _stopped(self.proc.pid):
                    self.interfered = True
                if time.monotonic() < deadline:
                    continue
                self.stop()
                raise JudgeFailed(f"the judge's timer did not answer ({type(e).__name__}: {e})") from e
            except Exception as e:  # noqa: BLE001 - end of stream, garbage: the timer is gone
                self.stop()
                raise JudgeFailed(f"the judge's timer did not answer ({type(e).__name__}: {e})") from e
            if msg.get("type") == kind:
                return msg
            if msg.get("type") != "send-fds":
                self.stop()
                raise JudgeFailed(f"the judge's timer answered {msg.get('type')!r} where {kind!r} was due")

    def session(self, link_id: str, link_sock: socket.socket, req: dict, grace_s: float = 60.0) -> dict:
        """Run one candidate's session (see session.Session) and return its report."""
        with self._lock:
            try:
                if not self._alive():
                    self._start()
                self._flush_closing()
                deadline = time.monotonic() + float(req["trial_s"]) + grace_s
                rid = secrets.token_hex(8)
                others = sorted(p for p in set(self.workers) if p != req.get("supervisor"))
                self.ctrl.send({**req, "type": "session", "id": rid, "link": link_id, "others": others})
                if link_id not in self.known:
                    msg = self.ctrl.recv(max(0.05, deadline - time.monotonic()))
                    if msg.get("type") != "send-fds":
                        raise JudgeFailed(f"the judge's timer answered {msg.get('type')!r} to a new link")
                    self.ctrl.send_fds([link_sock.fileno()])
                    self.known.add(link_id)
                self.interfered = False
                msg = self._reply("report", deadline)
                report = dict(msg.get("report") or {})
                if report.pop("restart", False):
                    self.stop()
                if self.interfered:
                    report.update(status="cheat_suspected", reason="the judge's timer was stopped by another process "
                                  "during the session")
                return report
            except JudgeFailed as e:
                self.stop()
                return {"status": "crashed", "reason": str(e)}
            except OSError as e:
                self.stop()
                return {"status": "crashed", "reason": f"the judge's timer could not be reached: {e}"}


class TimerPool:
    """Timers per (device, GPU) for this process. On a GPU one timer (timed regions are
    exclusive anyway); on the CPU `CPU_TIMERS`, so sessions of parallel workers overlap. A
    link always goes to the same timer (its arena lives there)."""

    CPU_TIMERS = 2

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._timers: dict[str, list[Timer]] = {}
        self._assigned: dict[str, Timer] = {}
        self._root: str | None = None

    def timer_for(self, link_id: str, device: str, gpu: str, env: dict[str, str],
                  timing_cpus: list[int] | None) -> Timer:
        import tempfile

        with self._lock:
            if link_id in self._assigned:
                return self._assigned[link_id]
            if self._root is None:
                self._root = tempfile.mkdtemp(prefix="wb_timer_")
                atexit.register(self.close)
            key = f"{device}|{gpu}"
            if key not in self._timers:
                n = 1 if device.startswith("cuda") else self.CPU_TIMERS
                self._timers[key] = [Timer(device, env, self._root, timing_cpus) for _ in range(n)]
                for t in self._timers[key]:
                    with t._lock:
                        t._start()     # the process starts (torch, its reference worker) while the worker warms up
            pool = self._timers[key]
            t = min(pool, key=lambda x: sum(1 for v in self._assigned.values() if v is x))
            self._assigned[link_id] = t
            return t

    def release(self, link_id: str) -> None:
        with self._lock:
            t = self._assigned.pop(link_id, None)
        if t is not None:
            t.close_link(link_id)

    def close(self) -> None:
        with self._lock:
            for pool in self._timers.values():
                for t in pool:
                    t.stop()
            self._timers.clear()
            self._assigned.clear()


POOL = TimerPool()


if __name__ == "__main__":
    sys.exit(_serve_main(int(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "",
                         sys.argv[5] if len(sys.argv) > 5 else ""))
