"""Executors: local GPU queue, CPU interpreter, and cache replay. See base.Executor."""
from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Iterable, Sequence

from workbench.errors import ConfigError
from workbench.execution.base import Executor, done_future
from workbench.execution.hardware import cpu_hardware, roofline_floor_ms
from workbench.execution.sandbox import run_in_sandbox
from workbench.records import Candidate, Hardware, Measurement, Problem, Status


def probe_gpu(index: int) -> Hardware:
    """Fingerprint a GPU from a subprocess, so this process never creates a CUDA context."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(index))
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, "-m", "workbench.execution.hardware", "0"], capture_output=True,
                         text=True, env=env, timeout=120)
    if out.returncode != 0:
        raise ConfigError(f"GPU {index} cannot be used: {out.stderr.strip()[-500:]}; "
                          "check `nvidia-smi` and CUDA_VISIBLE_DEVICES, or use --gpu cpu")
    return Hardware.from_dict(json.loads(out.stdout.strip().splitlines()[-1]))


class _PoolExecutor(Executor):
    """Shared queue logic: a thread pool in which each task runs one sandboxed worker."""

    def __init__(self, workers: int):
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="wb-measure")
        self._closed = False

    def _measure_one(self, problem: Problem, candidate: Candidate) -> Measurement:  # pragma: no cover
        raise NotImplementedError

    def submit(self, problem: Problem, candidates: Sequence[Candidate]) -> list[Future[Measurement]]:
        if self._closed:
            raise ConfigError("this executor is closed; create a new one")
        return [self._pool.submit(self._safe, problem, c) for c in candidates]

    def _safe(self, problem: Problem, candidate: Candidate) -> Measurement:
        try:
            return self._measure_one(problem, candidate)
        except Exception as e:  # noqa: BLE001 - an executor bug must still yield a record
            return Measurement(candidate_id=candidate.id, problem_id=problem.id, hardware_key=self.hardware.key,
                               status=Status.CRASHED, reason=f"executor error: {type(e).__name__}: {e}",
                               hardware_fingerprint=self.hardware.fingerprint)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool.shutdown(wait=True, cancel_futures=True)


class _Gate:
    """Shared/exclusive admission to one GPU for this executor's workers.

    Normal jobs enter shared (many at once); a retry after a GPU out-of-memory error enters
    exclusive: it waits until the GPU is free of this executor's jobs and keeps new ones out
    while it runs, so a kernel that only failed because its neighbours held the memory gets
    a fair second run.
    """

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._active = 0
        self._exclusive_waiting = 0
        self._exclusive = False

    @contextlib.contextmanager
    def shared(self):
        with self._cv:
            self._cv.wait_for(lambda: not self._exclusive and not self._exclusive_waiting)
            self._active += 1
        try:
            yield
        finally:
            with self._cv:
                self._active -= 1
                self._cv.notify_all()

    @contextlib.contextmanager
    def exclusive(self):
        with self._cv:
            self._exclusive_waiting += 1
            self._cv.wait_for(lambda: self._active == 0 and not self._exclusive)
            self._exclusive_waiting -= 1
            self._exclusive = True
        try:
            yield
        finally:
            with self._cv:
                self._exclusive = False
                self._cv.notify_all()


_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def _retry_after_oom(m: Measurement, gpu_memory_mib: int) -> bool:
    """A CUDA out-of-memory error worth one more run alone on the GPU: one whose failed
    request would fit in the GPU (a request larger than the whole GPU never will)."""
    if m.status is not Status.RUNTIME_ERROR or "out of memory" not in m.reason.lower() or "CUDA" not in m.reason:
        return False
    hit = re.search(r"Tried to allocate ([0-9.]+) ([KMGT]?i?B)", m.reason)
    if not hit or hit.group(2) not in _UNITS:
        return True
    return float(hit.group(1)) * _UNITS[hit.group(2)] < 0.9 * gpu_memory_mib * 2**20


class LocalGPUExecutor(_PoolExecutor):
    """Measures on local CUDA GPUs. Many workers compile and check concurrently; timing on
    each GPU is serialised by a file lock so two timings never share a GPU."""

    def __init__(self, gpus: Sequence[int] = (0,), workers: int | None = None, timeout_s: float = 300.0,
                 run_timeout_s: float = 120.0, memory_fraction: float | None = None,
                 options: dict | None = None, cache_root: str | Path | None = None):
        """`timeout_s`: compile+correctness budget per candidate (CUDA C++: doubled);
        `run_timeout_s`: timing budget once the GPU's lock is held; seconds."""
        if not gpus:
            raise ConfigError("LocalGPUExecutor needs at least one GPU index")
        self.gpus = list(gpus)
        self.hardware_by_gpu = {g: probe_gpu(g) for g in self.gpus}
        keys = {h.key for h in self.hardware_by_gpu.values()}
        if len(keys) > 1:
            raise ConfigError(f"GPUs of different types {sorted(keys)} in one executor; use one executor per type")
        self.hardware = self.hardware_by_gpu[self.gpus[0]]
        workers = workers or max(2, min(12, (os.cpu_count() or 4) - 2))
        super().__init__(workers)
        per_gpu = max(1, workers // len(self.gpus))
        self._memory_fraction = memory_fraction if memory_fraction is not None else min(0.9, 0.9 / per_gpu * 2)
        self._timeout_s = timeout_s
        self._run_timeout_s = run_timeout_s
        self._options = options or {}
        self._cache_root = cache_root
        self._lock_dir = tempfile.mkdtemp(prefix="wb_gpu_locks_")
        self._next_gpu = itertools.cycle(self.gpus)
        self._gpu_lock = threading.Lock()
        self._gates = {g: _Gate() for g in self.gpus}
        # One CPU core per GPU is kept for the process that is timing on it (kernel launches
        # are CPU-bound for small kernels; compiling neighbours must not delay them).
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        if len(cpus) >= 4 * len(self.gpus):
            self._timing_cpus = {g: [cpus[i]] for i, g in enumerate(self.gpus)}
            self._worker_cpus = cpus[len(self.gpus):]
        else:
            self._timing_cpus, self._worker_cpus = {}, []

    def _measure_one(self, problem: Problem, candidate: Candidate) -> Measurement:
        with self._gpu_lock:
            gpu = next(self._next_gpu)
        hw = self.hardware_by_gpu[gpu]
        timeout = self._timeout_s * (2 if candidate.backend == "cuda" else 1)
        options = {"gpu_memory_fraction": self._memory_fraction, "timing_cpus": self._timing_cpus.get(gpu),
                   "worker_cpus": self._worker_cpus or None, **self._options}

        def run(opts: dict) -> Measurement:
            return run_in_sandbox(problem, candidate, hw, device="cuda", gpu_index=gpu, timeout_s=timeout,
                                  run_timeout_s=self._run_timeout_s,
                                  lock_path=os.path.join(self._lock_dir, f"gpu{gpu}.lock"),
                                  roofline_floor_ms=roofline_floor_ms(hw.key, problem.flops, problem.bytes_moved),
                                  options=opts, cache_root=self._cache_root)

        with self._gates[gpu].shared():
            m = run(options)
        if _retry_after_oom(m, hw.memory_mib):
            with self._gates[gpu].exclusive():
                m = run({**options, "gpu_memory_fraction": 0.9})
            if not m.ok:
                m = m.replace(reason=m.reason + " (also when run alone on the GPU)")
        return m


class CPUExecutor(_PoolExecutor):
    """Runs Triton through TRITON_INTERPRET=1 on the CPU at each problem's CPU_SIZES.

    For correctness (and CI): its timings are labelled hardware "cpu" and never mixed with GPU
    data. CUDA C++ candidates cannot run here and are reported as runtime_error.
    """

    def __init__(self, workers: int = 2, timeout_s: float = 120.0, run_timeout_s: float = 60.0,
                 cpu_mem_bytes: int = 6 * 2**30, options: dict | None = None,
                 cache_root: str | Path | None = None):
        """Budgets in seconds (see LocalGPUExecutor); `cpu_mem_bytes` is each worker's RLIMIT_AS."""
        super().__init__(workers)
        self._run_timeout_s = run_timeout_s
        self.hardware = cpu_hardware()
        self._timeout_s = timeout_s
        self._mem = cpu_mem_bytes
        self._options = {"seeds": [0, 1], **(options or {})}
        self._cache_root = cache_root

    def _measure_one(self, problem: Problem, candidate: Candidate) -> Measurement:
        if candidate.backend == "cuda":
            return Measurement(candidate_id=candidate.id, problem_id=problem.id, hardware_key="cpu",
                               status=Status.RUNTIME_ERROR, hardware_fingerprint=self.hardware.fingerprint,
                               reason="CUDA C++ candidates need a GPU; the CPU executor runs Triton and torch only")
        return run_in_sandbox(problem, candidate, self.hardware, device="cpu", timeout_s=self._timeout_s,
                              run_timeout_s=self._run_timeout_s,
                              cpu_mem_bytes=self._mem, options=self._options, cache_root=self._cache_root)


class CacheExecutor(Executor):
    """Answers from recorded measurements: the app's replay mode. No GPU needed.

    A candidate that was never measured on this hardware is reported as a crashed record whose
    reason says so (a replayed search only proposes cached candidates, so this means misuse).
    """

    def __init__(self, measurements: Iterable[Measurement], hardware: Hardware | str):
        if isinstance(hardware, str):
            hardware = Hardware(key=hardware, name=f"replay of {hardware}", kind="replay")
        self.hardware = hardware
        self._by_id = {m.candidate_id: m for m in measurements if m.hardware_key == hardware.key}
        if not self._by_id:
            raise ConfigError(f"no recorded measurements for hardware {hardware.key!r}; "
                              "load the shipped data first (`workbench dataset load-shipped`)")

    @classmethod
    def from_store(cls, store, hardware_key: str) -> "CacheExecutor":
        """Replay `hardware_key`; the hardware record is the one the measurements were taken on,
        so forecasters see the real GPU's SM count, memory and clocks."""
        ms = store.measurements(hardware_key=hardware_key)
        recorded = next((m.hardware for m in ms if m.hardware_json), None)
        return cls(ms, recorded or hardware_key)

    def __contains__(self, candidate_id: str) -> bool:
        return candidate_id in self._by_id

    @property
    def candidate_ids(self) -> set[str]:
        return set(self._by_id)

    def submit(self, problem: Problem, candidates: Sequence[Candidate]) -> list[Future[Measurement]]:
        out = []
        for c in candidates:
            m = self._by_id.get(c.id)
            if m is None:
                m = Measurement(candidate_id=c.id, problem_id=problem.id, hardware_key=self.hardware.key,
                                status=Status.CRASHED,
                                reason=f"not in the replay cache for {self.hardware.key}: replay can only "
                                       "answer candidates that were measured on a real GPU")
            out.append(done_future(m))
        return out
