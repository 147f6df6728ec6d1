"""The reference, run where no candidate code was ever imported.

`python -m workbench.execution.reference --serve` (a clean process: it never imports candidate
code) builds each problem's reference it is sent with the seeds a worker uses, writes its outputs at every point a worker ships (tensorfile), and times it alone
with the same timer; the executor compares each candidate's shipped outputs with these and
checks the reference time a worker reports against this one (`reference_finding`).

`ReferenceStore` asks a small pool of such processes per device and GPU once per problem,
device, GPU and settings for the life of the executor's process, and hands the result
(`ReferenceData`) to every chunk that needs it.
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


#: The clean reference's timing stops after this much timed work (ms) if its precision
#: targets were not met before: it is a check of the worker's reference time, not a result.
CLEAN_TIMING_MAX_MS = 300.0


class ReferenceFailed(Exception):
    """The reference itself failed in the clean process (a problem bug, not a candidate's)."""


@dataclass(frozen=True)
class ReferenceData:
    directory: str
    points: dict[str, list[dict]]
    timing: dict | None            # TimingStats.to_dict() of the reference alone, or None
    hashes: dict[str, str] = field(default_factory=dict)   # file name -> sha256, checked where
    check_hashes: bool = False                              # workers could write here
    reduced_k: dict[str, int] = field(default_factory=dict)  # point -> longest size (fp32 atol)
    matmul_like: bool = False


def _spec_key(spec: dict) -> str:
    h = hashlib.sha256(json.dumps({k: spec[k] for k in sorted(spec) if k not in ("out_dir", "lock_path")},
                                  sort_keys=True, default=str).encode())
    return h.hexdigest()[:24]


class _Server:
    """One clean reference process (`python -m workbench.execution.reference --serve`), fed one
    spec at a time over its standard input; it answers on its channel and imports nothing but
    the problem files it is given. Restarted when it dies."""

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
    """Clean reference runs, once per (problem, device, GPU, settings) in this process, by a
    small pool of clean reference processes per device and GPU."""

    SERVERS_PER_GPU = 2
    #: Problems' reference data kept while no chunk uses them (least recently used go first).
    KEEP_IDLE = 6

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, Future] = {}
        self._users: dict[str, int] = {}
        self._last_use: dict[str, float] = {}
        self._specs: dict[str, tuple[dict, str, float]] = {}   # key -> (spec, pool key, timeout)
        self._pools: dict[str, queue.Queue] = {}
        self._root: str | None = None

    def _dir(self) -> str:
        if self._root is None:
            self._root = tempfile.mkdtemp(prefix="wb_reference_")
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

    def get(self, spec: dict, env: dict[str, str], timeout_s: float, check_hashes: bool) -> tuple[str, Future]:
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
                pool_key = f"{spec['device']}|{spec.get('gpu', '')}"
                if pool_key not in self._pools:
                    pool: queue.Queue = queue.Queue()
                    n = self.SERVERS_PER_GPU if spec["device"].startswith("cuda") else 1
                    for _ in range(n):
                        pool.put(_Server(env, self._root))
                    self._pools[pool_key] = pool
                self._specs[key] = ({**spec, "out_dir": out}, pool_key, timeout_s)
                threading.Thread(target=self._run, args=(fut, self._pools[pool_key], {**spec, "out_dir": out},
                                                         timeout_s, check_hashes), daemon=True).start()
        return key, fut

    def retime(self, key: str) -> dict | None:
        """The reference of `key` timed alone again, now (TimingStats dict), or None if that
        fails: a second look before a candidate is flagged, under the load of this moment."""
        with self._lock:
            got = self._specs.get(key)
            pool = self._pools.get(got[1]) if got else None
        if got is None or pool is None:
            return None
        spec, _, timeout_s = got
        server = pool.get()
        try:
            return server.run({**spec, "timing_only": True}, timeout_s).get("timing")
        except ReferenceFailed:
            return None
        finally:
            pool.put(server)

    @staticmethod
    def _run(fut: Future, pool: queue.Queue, spec: dict, timeout_s: float, check_hashes: bool) -> None:
        server = pool.get()
        try:
            out = Path(spec["out_dir"])
            if out.exists():
                shutil.rmtree(out)
            out.mkdir(parents=True)
            m = server.run(spec, timeout_s)
            hashes = {}
            if check_hashes:
                from workbench.execution.tensorfile import sha256_file

                hashes = {meta["file"]: sha256_file(out / meta["file"]) for metas in m["points"].values()
                          for meta in metas if meta.get("file")}
            fut.set_result(ReferenceData(str(out), m["points"], m.get("timing"), hashes, check_hashes,
                                         {k: int(v) for k, v in m.get("reduced_k", {}).items()},
                                         bool(m.get("matmul_like"))))
        except BaseException as e:  # noqa: BLE001 - handed to every waiting chunk
            fut.set_exception(e)
        finally:
            pool.put(server)


STORE = ReferenceStore()


def reference_finding(worker_ms: list[float], clean: dict | None, device: str) -> str | None:
    """A sentence when the reference timed beside the candidate is slower than the same
    reference timed alone in the clean process by more than the noise allows, else None."""
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
    return (f"the reference took {w.median_ms:.4f} ms beside the candidate but {c_med:.4f} ms alone in a "
            f"clean process ({ratio:.2f}x): the candidate slowed the reference down")


# --------------------------------------------------------------------------- the clean process
def _serve(channel: int) -> int:
    """The clean process: one spec at a time from standard input, one reply per spec on `channel`."""
    import traceback

    import torch

    from workbench.execution import protocol

    torch.backends.cudnn.allow_tf32 = False
    jobs = protocol.FrameReader(0)
    while True:
        msg = jobs.read()
        if msg is None:
            return 0
        try:
            manifest = _compute(msg["spec"])
            protocol.send(channel, {"ok": True, "manifest": manifest})
        except BaseException as e:  # noqa: BLE001 - reported, then this process goes on or leaves
            sticky = "CUDA" in str(e) or isinstance(e, MemoryError)
            protocol.send(channel, {"ok": False, "exit": sticky,
                                                "error": f"{type(e).__name__}: {str(e)[:1500]}\n"
                                                         + traceback.format_exc()[-1500:]})
            if sticky:
                return 1
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def _compute(spec: dict) -> dict:
    import torch

    from workbench.execution.correctness import is_matmul_like
    from workbench.execution.gpu_lock import GpuLock
    from workbench.execution.tensorfile import nbytes, ships, write_outputs
    from workbench.execution.worker import _inputs, _second_shape, _sync
    from workbench.problems import load_source

    problem, device, out = spec["problem"], spec["device"], spec["out_dir"]
    seeds = list(spec["seeds"])
    cuda = device.startswith("cuda")
    gpu = GpuLock(spec.get("lock_path") if cuda else None)
    points: dict[str, list[dict]] = {}

    def build(mod):
        torch.manual_seed(seeds[0])
        return mod.Model(*mod.get_init_inputs())

    def run(model, inputs):
        with torch.no_grad():
            o = model(*inputs)
        _sync(device)
        return o

    def put(point: str, o, first: bool = False) -> None:
        if ships(point, nbytes(o), first):
            points[point] = write_outputs(out, point, o)

    precision = spec.get("precision", "native")
    full = load_source(problem["source"], name=problem["id"], cpu=(device == "cpu"), precision=precision)
    if spec.get("timing_only"):
        ref = build(full.module)
        with gpu.shared():
            ref = ref.to(device).eval()
            sets = []
            for k in range(int(spec.get("input_sets", 3))):
                torch.manual_seed(9000 + k)
                sets.append(_inputs(full.module, device))
        return {"points": {}, "timing": _time_alone(ref, sets, device, spec, gpu)}
    k_full = int(max(full.sizes.values(), default=1)) if full.sizes else 1
    reduced_k: dict[str, int] = {}
    ref = build(full.module)
    timing_sets = []
    with gpu.shared():
        ref = ref.to(device).eval()
        for i, s in enumerate(seeds):
            torch.manual_seed(1000 + s)
            put(f"full size:seed{s}", run(ref, _inputs(full.module, device)), first=(i == 0))
        torch.manual_seed(5000 + seeds[0])
        put(f"full size:fresh{seeds[0]}", run(ref, _inputs(full.module, device)))
        if spec.get("second_shape", True):
            other = _second_shape(problem, device, precision)
            if other is not None:
                ref2 = build(other.module).to(device).eval()
                torch.manual_seed(1000 + seeds[0])
                put(f"second shape:seed{seeds[0]}", run(ref2, _inputs(other.module, device)))
                reduced_k[f"second shape:seed{seeds[0]}"] = int(max(other.sizes.values(), default=1))
                del ref2
        if spec.get("time", True):
            for k in range(int(spec.get("input_sets", 3))):
                torch.manual_seed(9000 + k)
                timing_sets.append(_inputs(full.module, device))
                put(f"set{k}", run(ref, timing_sets[-1]))
    timing = None
    if timing_sets:
        timing = _time_alone(ref, timing_sets, device, spec, gpu)
    for p in points:
        reduced_k.setdefault(p, k_full)
    mm = is_matmul_like(str(getattr(full.module, "CATEGORY", "")), tuple(getattr(full.module, "TAGS", ()) or ()))
    return {"points": points, "timing": timing, "reduced_k": reduced_k, "matmul_like": mm}


def _time_alone(ref, input_sets, device: str, spec: dict, gpu) -> dict:
    import torch

    from workbench.execution import timing

    def fn(inputs):
        with torch.no_grad():
            return ref(*inputs)

    if not device.startswith("cuda"):
        opts = {"warmup": 1, "min_runs": 3, "max_runs": 20, "max_total_ms": 2000.0, **spec.get("cpu_timing", {})}
        with gpu.exclusive(), timing.no_gc():
            (samples,) = timing.interleaved_samples([fn], input_sets, timing.wall_timer, **opts)
        return timing.summarise(samples).to_dict()
    flush = timing.L2Flusher(torch.device(device))
    cpus = spec.get("timing_cpus") if hasattr(os, "sched_setaffinity") else None
    with gpu.exclusive():
        saved = os.sched_getaffinity(0) if cpus else None
        if cpus:
            os.sched_setaffinity(0, cpus)
        try:
            torch.cuda.synchronize()
            with timing.no_gc():
                opts = {**timing.CUDA_DEFAULTS, **spec.get("timing", {})}
                opts["max_total_ms"] = min(opts["max_total_ms"], CLEAN_TIMING_MAX_MS)
                (samples,) = timing.interleaved_samples([fn], input_sets, timing.CudaEventTimer(flush), **opts)
        finally:
            if saved:
                os.sched_setaffinity(0, saved)
    return timing.summarise(samples).to_dict()


def job_point_reference(point: str) -> str:
    """The reference point a worker's point is compared with ("timed:<i>:set<k>" -> "set<k>")."""
    return point.rsplit(":", 1)[1] if point.startswith("timed:") else point


def spec_for(problem: dict, device: str, options: dict[str, Any], lock_path: str | None) -> dict:
    """The reference run a chunk's jobs need (the settings that change its outputs or times)."""
    return {"problem": problem, "device": device, "seeds": list(options.get("seeds", [0, 1, 2])),
            "second_shape": options.get("second_shape", True), "time": options.get("time", True),
            "input_sets": int(options.get("input_sets", 3)), "timing": options.get("timing", {}),
            "cpu_timing": options.get("cpu_timing", {}), "lock_path": lock_path,
            "precision": options.get("precision", "native"),
            "gpu": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
            # The core the workers time on (LocalGPUExecutor keeps one per GPU): the clean
            # reference is timed there too, so its launch overhead is the workers'.
            "timing_cpus": options.get("timing_cpus")}


if __name__ == "__main__":
    sys.exit(_serve(int(sys.argv[2])))
