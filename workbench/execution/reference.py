"""The reference, prepared where no candidate code was ever imported, and the check that the
candidate did not slow it down.

`python -m workbench.execution.reference --serve` (a clean process: it never imports candidate
code) builds each problem's Model at every shape a candidate is checked at, with the seed the
workers use and at the run's precision (`workbench.problems.contract`), and writes its weights
(a plain state dict, tensorfile.write_state) for the candidate's worker to copy in by name;
the candidate's process never builds or holds a reference. The reference is run, checked
against and timed by the judge (timer.py).

`ReferenceStore` asks a small pool of such processes once per problem, device and settings
for the life of the executor's process, and hands the result (`ReferenceData`) to every chunk
that needs it. `reference_finding` compares the reference timed beside a candidate with the
same reference timed alone.
"""
from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import subprocess
import sys
import queue
import tempfile
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: A worker's reference median may exceed the clean one by this share (GPU), plus three
#: times the two medians' relative CI half-widths, before it is flagged.
GPU_SLACK = 0.15
#: On the CPU (interpreter, wall clock, shared cores; an honest reference timed beside an
#: interpreted candidate is often several ms slower than alone) only a gross slowdown is
#: flagged: the worker's FASTEST reference sample over CPU_FACTOR times the clean median plus
#: CPU_ABS_MS milliseconds.
CPU_FACTOR, CPU_ABS_MS = 3.0, 10.0


class ReferenceFailed(Exception):
    """The reference itself failed in the clean process (a problem bug, not a candidate's)."""


@dataclass(frozen=True)
class ReferenceData:
    """A problem prepared for measuring: per shape ("full", and "second" when the problem has
    a second shape) how to load it (`shapes`: {"cpu": bool, "sizes": dict | None, "precision":
    the run's contract precision}), where its
    weights are (`weights`: a directory of tensorfile.write_state), and the fp32 tolerance's
    reduction length (`reduced_k`); whether its main work is a matmul (`matmul_like`)."""

    directory: str
    shapes: dict[str, dict]
    weights: dict[str, str]
    reduced_k: dict[str, int] = field(default_factory=dict)
    matmul_like: bool = False


def _spec_key(spec: dict) -> str:
    h = hashlib.sha256(json.dumps({k: spec[k] for k in sorted(spec) if k != "out_dir"},
                                  sort_keys=True, default=str).encode())
    return h.hexdigest()[:24]


class _Server:
    """One clean preparation process (`python -m workbench.execution.reference --serve`), fed
    one spec at a time over its standard input; it answers on its channel and imports nothing
    but the problem files it is given. Restarted when it dies."""

    def __init__(self, env: dict[str, str], log_dir: str):
        self.env, self.log_dir = env, log_dir
        self.proc: subprocess.Popen | None = None
        self.reader = None
        self.job_w = -1

    def _start(self) -> None:
        from workbench.execution import protocol

        root = str(Path(__file__).resolve().parents[2])
        env = dict(self.env, PYTHONUNBUFFERED="1")
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        job_r, self.job_w = os.pipe()
        res_r, res_w = os.pipe()
        log = open(os.path.join(self.log_dir, f"reference-{os.getpid()}-{id(self)}.log"), "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "workbench.execution.reference", "--serve", str(res_w)],
                                     stdin=job_r, stdout=log, stderr=subprocess.STDOUT, env=env,
                                     pass_fds=(res_w,), start_new_session=True)
        log.close()
        os.close(job_r)
        os.close(res_w)
        self.reader = protocol.FrameReader(res_r)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            for fd in (self.job_w, self.reader.fd):
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.proc = None

    def run(self, spec: dict, timeout_s: float) -> dict:
        from workbench.execution import protocol

        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            self._start()
        protocol.send(self.job_w, {"type": "spec", "spec": spec})
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                frames = self.reader.poll(0.1)
            except protocol.ProtocolError as e:
                self.stop()
                raise ReferenceFailed(f"the clean reference process answered out of protocol: {e}") from e
            if frames:
                reply = frames[0]
                if reply.get("exit"):
                    self.stop()
                if not reply.get("ok"):
                    raise ReferenceFailed(f"the reference failed in a clean process: {reply.get('error', '')}")
                return reply["manifest"]
            if self.proc.poll() is not None:
                self.stop()
                raise ReferenceFailed("the clean reference process died while running the reference "
                                      f"(exit {self.proc.returncode if self.proc else '?'})")
        self.stop()
        raise ReferenceFailed(f"the reference did not finish within {timeout_s:.0f} s in a clean process")


class ReferenceStore:
    """Clean preparations, once per (problem, device, settings) in this process, by a small
    pool of clean processes (CPU work: models built, weights written)."""

    SERVERS = 2
    #: Problems' reference data kept while no chunk uses them (least recently used go first).
    KEEP_IDLE = 6

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, Future] = {}
        self._users: dict[str, int] = {}
        self._last_use: dict[str, float] = {}
        self._pools: dict[str, queue.Queue] = {}
        self._root: str | None = None

    def _dir(self) -> str:
        if self._root is None:
            self._root = tempfile.mkdtemp(prefix="wb_reference_")
            os.chmod(self._root, 0o755)   # weights are read by workers of another user
            atexit.register(self.close)
        return self._root

    def close(self) -> None:
        with self._lock:
            for pool in self._pools.values():
                while not pool.empty():
                    pool.get().stop()
            self._pools.clear()
            self._runs.clear()
            if self._root:
                shutil.rmtree(self._root, True)
                self._root = None

    def release(self, key: str) -> None:
        """A chunk is done with the data of `key`; idle data beyond KEEP_IDLE is deleted."""
        with self._lock:
            self._users[key] = max(0, self._users.get(key, 1) - 1)
            self._last_use[key] = time.monotonic()
            idle = sorted((k for k, f in self._runs.items() if f.done() and not self._users.get(k)),
                          key=lambda k: self._last_use.get(k, 0.0))
            for k in idle[: max(0, len(idle) - self.KEEP_IDLE)]:
                fut = self._runs.pop(k)
                self._users.pop(k, None)
                self._last_use.pop(k, None)
                if fut.exception() is None:
                    shutil.rmtree(fut.result().directory, True)

    def get(self, spec: dict, env: dict[str, str], timeout_s: float) -> tuple[str, Future]:
        """(key, Future of ReferenceData or of a ReferenceFailed exception) for `spec`; the
        caller says `release(key)` when done with it."""
        key = _spec_key(spec)
        with self._lock:
            self._users[key] = self._users.get(key, 0) + 1
            fut = self._runs.get(key)
            if fut is None or (fut.done() and fut.exception() is not None and not isinstance(
                    fut.exception(), ReferenceFailed)):
                fut = Future()
                self._runs[key] = fut
                out = os.path.join(self._dir(), key)
                if "prep" not in self._pools:
                    pool: queue.Queue = queue.Queue()
                    for _ in range(self.SERVERS):
                        pool.put(_Server(env, self._root))
                    self._pools["prep"] = pool
                threading.Thread(target=self._run, args=(fut, self._pools["prep"], {**spec, "out_dir": out},
                                                         timeout_s), daemon=True).start()
        return key, fut

    @staticmethod
    def _run(fut: Future, pool: queue.Queue, spec: dict, timeout_s: float) -> None:
        server = pool.get()
        try:
            out = Path(spec["out_dir"])
            if out.exists():
                shutil.rmtree(out)
            out.mkdir(parents=True)
            os.chmod(out, 0o755)
            m = server.run(spec, timeout_s)
            fut.set_result(ReferenceData(str(out), m["shapes"], m["weights"],
                                         {k: int(v) for k, v in m.get("reduced_k", {}).items()},
                                         bool(m.get("matmul_like"))))
        except BaseException as e:  # noqa: BLE001 - handed to every waiting chunk
            fut.set_exception(e)
        finally:
            pool.put(server)


STORE = ReferenceStore()


def reference_slowdown(worker_ms: list[float], clean: dict | None, device: str) -> str | None:
    """A sentence when the reference timed beside the candidate (`worker_ms`, its samples) is
    slower than the same reference timed alone (`clean`, TimingStats.to_dict()) by more than
    the noise allows, else None. Both are gate times of the clean reference worker
    (timer.py); "alone" is with no candidate session open. The sentence states the times, not
    who is to blame (reference_finding does)."""
    from workbench.execution.timing import summarise

    if not clean or not worker_ms:
        return None
    w = summarise(worker_ms)
    c_med = clean["median_ms"]
    if not (w.median_ms > 0 and c_med > 0):
        return None
    noise = ((w.ci_high_ms - w.ci_low_ms) / (2 * w.median_ms)
             + (clean["ci_high_ms"] - clean["ci_low_ms"]) / (2 * c_med))
    ratio = w.median_ms / c_med
    if device.startswith("cuda"):
        bad = ratio > 1 + max(GPU_SLACK, 3 * noise) and w.median_ms - c_med > 0.002
    else:
        bad = min(worker_ms) > CPU_FACTOR * c_med + CPU_ABS_MS
    if not bad:
        return None
    return (f"the reference took {w.median_ms:.4f} ms beside the candidate but {c_med:.4f} ms timed alone in "
            f"the clean process ({ratio:.2f}x)")


#: What a slowdown that stands is blamed on (reference_finding, the verdict's reasons).
BLAME = "the candidate slowed the reference down"


def reference_finding(worker_ms: list[float], clean: dict | None, device: str) -> str | None:
    """reference_slowdown's sentence with its verdict (BLAME)."""
    why = reference_slowdown(worker_ms, clean, device)
    return f"{why}: {BLAME}" if why else None


# --------------------------------------------------------------------------- the clean process
def _serve(channel: int) -> int:
    """The clean process: one spec at a time from standard input, one reply per spec on `channel`."""
    import traceback

    import torch

    from workbench.execution import contain, protocol

    contain.protect_process()
    jobs = protocol.FrameReader(0)
    while True:
        msg = jobs.read()
        if msg is None:
            return 0
        try:
            manifest = _compute(msg["spec"])
            protocol.send(channel, {"ok": True, "manifest": manifest})
        except BaseException as e:  # noqa: BLE001 - reported, then this process goes on or leaves
            sticky = isinstance(e, MemoryError)
            protocol.send(channel, {"ok": False, "exit": sticky,
                                                "error": f"{type(e).__name__}: {str(e)[:1500]}\n"
                                                         + traceback.format_exc()[-1500:]})
            if sticky:
                return 1


def _compute(spec: dict) -> dict:
    import torch

    from workbench.execution.correctness import is_matmul_like
    from workbench.execution.models import build_reference, longest_size, problem_shapes
    from workbench.execution.tensorfile import write_state

    problem, device, out = spec["problem"], spec["device"], spec["out_dir"]
    seed = int(list(spec["seeds"])[0])
    precision = str(spec.get("precision", "native"))
    shapes = problem_shapes(problem, device, spec.get("second_shape", True), precision)
    found: dict[str, Any] = {"shapes": {}, "weights": {}, "reduced_k": {}}
    for name, lp in shapes.items():
        with torch.no_grad():
            ref = build_reference(lp.module, seed)
        d = os.path.join(out, name)
        write_state(d, ref.state_dict())
        found["weights"][name] = d
        found["shapes"][name] = ({"cpu": device == "cpu", "sizes": None} if name == "full"
                                 else {"cpu": True, "sizes": dict(lp.sizes)})
        # Every process that loads this shape (the timer, the clean reference worker, the
        # candidate's worker) loads it at the precision these weights were made at.
        found["shapes"][name]["precision"] = precision
        found["reduced_k"][name] = longest_size(lp)
    full = shapes["full"].module
    found["matmul_like"] = is_matmul_like(str(getattr(full, "CATEGORY", "")), tuple(getattr(full, "TAGS", ()) or ()))
    return found


def spec_for(problem: dict, device: str, options: dict[str, Any]) -> dict:
    """The preparation a chunk's jobs need (the settings that change the reference's weights
    and shapes: the contract's precision among them)."""
    return {"problem": problem, "device": device, "seeds": list(options.get("seeds", [0, 1, 2]))[:1],
            "second_shape": options.get("second_shape", True), "precision": options.get("precision", "native")}


if __name__ == "__main__":
    sys.exit(_serve(int(sys.argv[2])))
