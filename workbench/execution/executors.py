"""Executors: local GPU queue, CPU interpreter, and cache replay. See base.Executor."""
from __future__ import annotations

import collections
import contextlib
import functools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from workbench.errors import ConfigError
from workbench.execution import contain
from workbench.execution.base import Executor, done_future
from workbench.execution.chunked import run_chunk
from workbench.execution.hardware import cpu_hardware, roofline_floor_ms
from workbench.execution.job import MeasureJob, MeasureOptions
from workbench.execution.sandbox import run_in_sandbox
from workbench.records import Candidate, Hardware, Measurement, Problem, Status


@functools.lru_cache(maxsize=None)
def probe_gpu(index: int) -> Hardware:
    """Fingerprint a GPU from a subprocess, so this process never creates a CUDA context
    (once per index and process: the answer does not change while the process runs)."""
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
        contain.protect_process()   # this process may hold the user's keys; workers must not read it
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="wb-measure")
        self._workers = workers
        self._closed = False

    @property
    def capacity(self) -> int:
        return self._workers

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


@dataclass(eq=False)
class _Item:
    problem: Problem
    candidate: Candidate
    future: Future
    queued_at: float            # time.monotonic()
    started: bool = False       # its Future was set running (it may be queued again)
    first: Measurement | None = None   # set when the item waits for its OOM retry


#: How long a GPU executor's chunk worker waits for more candidates of its problem by default
#: (seconds; see ChunkedExecutor `linger_s`).
GPU_LINGER_S = 1.0


def check_linger(linger_s: float) -> float:
    """`linger_s` as a float, or a ConfigError unless it is seconds in [0, 60]."""
    if not 0.0 <= linger_s <= 60.0:
        raise ConfigError(f"linger_s is seconds in [0, 60], got {linger_s}")
    return float(linger_s)


class ChunkedExecutor(Executor):
    """A background queue whose candidates are measured by chunk workers (`chunked.run_chunk`).

    `submit` only queues. `workers` slot threads each take a chunk: the oldest queued
    candidate and more queued candidates of its problem (up to `max_chunk`, and about an
    equal share of the queue per slot so every slot gets work; a CUDA C++ candidate alone, so
    builds run in parallel) and run it in one worker process. Every candidate gets exactly
    one Measurement; its Future resolves as soon as the worker reports it; a candidate that
    crashes or hangs costs itself only, the rest of its chunk goes to a fresh process; a
    worker that saw a suspect candidate exits (see chunked.py). On a GPU, a candidate that hit
    CUDA out-of-memory with a request that would fit is run again alone on the GPU.

    `linger_s` > 0: a worker process that has run its chunk waits up to that long for more
    queued Triton candidates of its problem and runs them too (up to `max_chunk` in all), so
    candidates that arrive a few at a time, as a live search submits them, share warm worker
    processes instead of starting one each. A lingering worker takes new candidates before an
    idle slot does.

    Timing on a GPU is exclusive against every other GPU phase of this executor's workers
    (gpu_lock.py): compiling and checking run in parallel, timed regions one at a time.
    """

    def __init__(self, hardware: Hardware, *, device: str = "cuda", gpus: Sequence[int | None] = (None,),
                 workers: int = 4, max_chunk: int = 8, timeout_s: float = 300.0, run_timeout_s: float = 120.0,
                 options: dict | None = None, cache_root: str | Path | None = None, coalesce_s: float = 0.1,
                 hardware_by_gpu: dict | None = None, on_raw=None, linger_s: float = 0.0):
        """`timeout_s`: compile+correctness budget per candidate (CUDA C++: tripled);
        `run_timeout_s`: timing budget; waiting for the GPU counts against neither (seconds).
        `coalesce_s`: how long a new submission waits for more to group with (seconds).
        `device` "cpu" runs Triton through TRITON_INTERPRET=1 (hardware "cpu", no GPU lock).
        `on_raw(candidate, result)` receives each worker's result dict (see chunked.run_chunk)."""
        if workers < 1 or max_chunk < 1:
            raise ConfigError("workers and max_chunk must be at least 1")
        contain.protect_process()   # this process may hold the user's keys; workers must not read it
        self._linger_s = check_linger(linger_s)
        self.hardware = hardware
        self.device = device
        self.gpus = list(gpus)
        self.hardware_by_gpu = hardware_by_gpu or {g: hardware for g in self.gpus}
        self._timeout_s, self._run_timeout_s = timeout_s, run_timeout_s
        self._options = dict(options or {})
        MeasureOptions.from_dict(self._options)  # an unknown option is refused here, not in a worker
        self._cache_root = cache_root
        self._on_raw = on_raw
        self._max_chunk, self._coalesce_s = max_chunk, coalesce_s
        self._lock_dir = tempfile.mkdtemp(prefix="wb_gpu_locks_") if device != "cpu" else None
        self._cv = threading.Condition()
        self._queue: collections.deque[_Item] = collections.deque()
        self._retry: list[_Item] = []
        self._active = {g: 0 for g in self.gpus}
        self._gates = {g: _Gate() for g in self.gpus}
        self._closed = False
        self._slots = [threading.Thread(target=self._slot, name=f"wb-chunk-{i}", daemon=True)
                       for i in range(workers)]
        for t in self._slots:
            t.start()

    @property
    def linger_s(self) -> float:
        """How long a worker that has run its chunk waits for more of its problem (seconds)."""
        return self._linger_s

    @property
    def capacity(self) -> int:
        """The slot threads: with at most this many queued, each slot takes one candidate."""
        return len(self._slots)

    # ----------------------------------------------------------------- queue
    def submit(self, problem: Problem, candidates: Sequence[Candidate]) -> list[Future[Measurement]]:
        now = time.monotonic()
        items = [_Item(problem, c, Future(), now) for c in candidates]
        with self._cv:
            if self._closed:
                raise ConfigError("this executor is closed; create a new one")
            for it in items:
                if self.device == "cpu" and it.candidate.backend == "cuda":
                    _resolve(it.future, _cuda_on_cpu(problem, it.candidate, self.hardware))
                else:
                    self._queue.append(it)
            self._cv.notify_all()
        return [it.future for it in items]

    def _take(self) -> tuple[list[_Item], bool] | None:
        """Next chunk (items, is_retry), or None when closed. Called with the lock held."""
        while True:
            if self._closed:
                return None
            if self._retry:
                first = self._retry[0]
                chunk = [it for it in self._retry if it.problem.id == first.problem.id][:self._max_chunk]
                self._retry = [it for it in self._retry if it not in chunk]
                return chunk, True
            if self._queue:
                wait = self._queue[0].queued_at + self._coalesce_s - time.monotonic()
                if wait <= 0:
                    return self._group(), False
                self._cv.wait(wait)
                continue
            self._cv.wait()

    def _group(self) -> list[_Item]:
        first = self._queue[0]
        if first.candidate.backend == "cuda":
            return [self._queue.popleft()]
        return self._pop_matching(first.problem.id, min(self._max_chunk, self._share()))

    def _share(self) -> int:
        """About an equal share of the queue per slot, at least 1 (lock held)."""
        return max(1, math.ceil(len(self._queue) / len(self._slots)))

    def _pop_matching(self, problem_id: str, size: int, skip_ids=frozenset()) -> list[_Item]:
        """Up to `size` queued Triton items of `problem_id`, oldest first, of distinct candidate
        ids not in `skip_ids`, taken off the queue (lock held)."""
        chunk, ids = [], set(skip_ids)
        for it in self._queue:
            if len(chunk) == size:
                break
            if it.problem.id == problem_id and it.candidate.backend != "cuda" and it.candidate.id not in ids:
                chunk.append(it)
                ids.add(it.candidate.id)
        taken = set(map(id, chunk))
        self._queue = collections.deque(it for it in self._queue if id(it) not in taken)
        return chunk

    @staticmethod
    def _start(items: list[_Item]) -> list[_Item]:
        """The items whose Futures could be set running (or already were), marked started; a
        cancelled one is left out."""
        live = [it for it in items if it.started or it.future.set_running_or_notify_cancel()]
        for it in live:
            it.started = True
        return live

    def _slot(self) -> None:
        while True:
            with self._cv:
                got = self._take()
                if got is None:
                    return
                items, retry = got
                gpu = min(self.gpus, key=lambda g: self._active[g])
                self._active[gpu] += 1
            try:
                live = self._start(items)
                if live:
                    gate = self._gates[gpu]
                    with (gate.exclusive() if retry else gate.shared()):
                        self._run(gpu, live, retry)
            finally:
                with self._cv:
                    self._active[gpu] -= 1

    # ----------------------------------------------------------------- measuring
    def _options_for(self, gpu: int | None, retry: bool) -> MeasureOptions:
        return MeasureOptions.from_dict(self._options)

    def _wants_retry(self, m: Measurement, gpu: int | None) -> bool:
        return False

    def _run(self, gpu: int | None, items: list[_Item], retry: bool) -> None:
        problem = items[0].problem
        by_id = {it.candidate.id: it for it in items}
        hw = self.hardware_by_gpu[gpu]
        again: list[_Item] = []

        def on_result(m: Measurement) -> None:
            it = by_id[m.candidate_id]
            if retry:
                if not m.ok:
                    m = m.replace(reason=m.reason + " (also when run alone on the GPU)")
            elif self._wants_retry(m, gpu):
                it.first = m
                again.append(it)
                return
            _resolve(it.future, m)

        try:
            job = MeasureJob(problem, hw, device=self.device, gpu_index=gpu, timeout_s=self._timeout_s,
                             run_timeout_s=self._run_timeout_s,
                             lock_path=os.path.join(self._lock_dir, f"gpu{gpu}.lock") if self._lock_dir else None,
                             roofline_floor_ms=(roofline_floor_ms(hw.key, problem.flops, problem.bytes_moved)
                                                if self.device != "cpu" else None),
                             cache_root=self._cache_root, options=self._options_for(gpu, retry))
            more = None if retry or not self._linger_s else (lambda: self._more(problem.id, items, by_id))
            run_chunk(job, [it.candidate for it in items], on_result=on_result, on_raw=self._on_raw,
                      respawn=False, more=more)
        except Exception as e:  # noqa: BLE001 - an executor bug must still yield a record per candidate
            why = f"executor error: {type(e).__name__}: {e}"
        else:
            # The worker ended early (a crash, a timeout, or a suspect candidate): what it did
            # not reach goes back to the front of the queue, for any free slot.
            rest = [it for it in items if it not in again and not it.future.done()]
            with self._cv:
                if rest and not self._closed:
                    self._queue.extendleft(reversed(rest))
                    self._cv.notify_all()
                    return self._queue_retries(again)
            why = "not measured: the executor was closed"
        for it in items:
            if it not in again and not it.future.done():
                _resolve(it.future, it.first or Measurement(
                    candidate_id=it.candidate.id, problem_id=problem.id, hardware_key=hw.key,
                    status=Status.CRASHED, reason=why, hardware_fingerprint=hw.fingerprint))
        with self._cv:
            self._queue_retries(again)

    def _more(self, problem_id: str, items: list[_Item], by_id: dict[str, _Item]) -> list[Candidate]:
        """For a chunk worker with nothing left (see `linger_s`): queued Triton candidates of
        its problem, up to `max_chunk` for the chunk in all, waiting up to `linger_s` for the
        first; they join `items` and `by_id`. Empty when none came, the chunk is full, a retry
        waits or the executor is closing."""
        deadline = time.monotonic() + self._linger_s
        with self._cv:
            # An out-of-memory retry waiting to run alone ends the lingering (it needs the GPU's
            # gate, which this chunk holds shared).
            while not self._closed and not self._retry and len(items) < self._max_chunk:
                taken = self._pop_matching(problem_id, min(self._max_chunk - len(items), self._share()), by_id)
                if taken:
                    live = self._start(taken)
                    for it in live:
                        items.append(it)
                        by_id[it.candidate.id] = it
                    if live:
                        return [it.candidate for it in live]
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cv.wait(left)
        return []

    def _queue_retries(self, again: list[_Item]) -> None:
        """Queue OOM retries (lock held)."""
        if self._closed:
            for it in again:
                _resolve(it.future, it.first.replace(
                    reason=it.first.reason + " (not run again alone: the executor was closed)"))
        elif again:
            self._retry.extend(again)
            self._cv.notify_all()

    def close(self) -> None:
        """Cancel what has not started, wait for running chunks, resolve waiting retries."""
        with self._cv:
            if self._closed:
                return
            self._closed = True
            for it in self._queue:
                it.future.cancel()
            self._queue.clear()
            self._cv.notify_all()
        for t in self._slots:
            t.join()
        with self._cv:
            for it in self._retry:
                _resolve(it.future, it.first.replace(
                    reason=it.first.reason + " (not run again alone: the executor was closed)"))
            self._retry.clear()


def _cuda_on_cpu(problem: Problem, candidate: Candidate, hardware: Hardware) -> Measurement:
    return Measurement(candidate_id=candidate.id, problem_id=problem.id, hardware_key=hardware.key,
                       status=Status.RUNTIME_ERROR, hardware_fingerprint=hardware.fingerprint,
                       reason="CUDA C++ candidates need a GPU; the CPU executor runs Triton and torch only")


def _resolve(future: Future, m: Measurement) -> None:
    if not future.done():
        future.set_result(m)


def _gpus_on_machine() -> int:
    """How many NVIDIA GPUs the machine has (the driver's /proc entries; no CUDA context)."""
    try:
        return len(os.listdir("/proc/driver/nvidia/gpus"))
    except OSError:
        return 0


def timing_cores(gpus: Sequence[int]) -> tuple[dict[int, list[int]], list[int]]:
    """({gpu: [core]}, worker cores): one CPU core per GPU of the machine kept for the judge
    timing on it (its timer, its reference worker and the candidate's worker during a session:
    kernel launches and host synchronisations are CPU-bound, compiling neighbours must not
    delay them). The core is chosen by the GPU's index on the machine, so executors of different GPUs on one
    machine (one per GPU, side by side) never share one; workers run on the cores no GPU
    keeps. Empty when the machine has fewer than 4 cores per GPU."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    phys = {g: _machine_index(g) for g in gpus}
    n = max(_gpus_on_machine(), max(phys.values(), default=0) + 1)
    if len(cpus) < 4 * n:
        return {}, []
    return {g: [cpus[phys[g]]] for g in gpus}, cpus[n:]


def _machine_index(gpu: int) -> int:
    """The machine's index of the process's CUDA device `gpu`: through CUDA_VISIBLE_DEVICES
    when it lists indexes (two executors started with CUDA_VISIBLE_DEVICES=0 and =1 both
    call their GPU 0, and must not share a timing core), else `gpu` itself."""
    seen = [x.strip() for x in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if x.strip()]
    if gpu < len(seen) and seen[gpu].isdigit():
        return int(seen[gpu])
    return gpu


class LocalGPUExecutor(ChunkedExecutor):
    """Measures on local CUDA GPUs with chunk workers (see ChunkedExecutor). Many workers
    compile and check concurrently; on each GPU a timed region excludes all other GPU work
    of this executor's workers (gpu_lock.py)."""

    def __init__(self, gpus: Sequence[int] = (0,), workers: int | None = None, timeout_s: float = 300.0,
                 run_timeout_s: float = 120.0, memory_fraction: float | None = None,
                 options: dict | None = None, cache_root: str | Path | None = None, max_chunk: int = 8,
                 on_raw=None, linger_s: float = GPU_LINGER_S):
        """`timeout_s`: compile+correctness budget per candidate (CUDA C++: tripled);
        `run_timeout_s`: timing budget once the GPU's lock is held; seconds. `linger_s`: see
        ChunkedExecutor (on a GPU a worker lingers 1 s by default: a live search's next
        candidates then reuse the warm process, see benchmarks/live_bench.py).
        `memory_fraction`: each worker's share of GPU memory (default 1.8 / workers per GPU,
        at least 0.25: workers seldom peak together, and an out-of-memory run is repeated alone)."""
        if not gpus:
            raise ConfigError("LocalGPUExecutor needs at least one GPU index")
        hardware_by_gpu = {g: probe_gpu(g) for g in gpus}
        keys = {h.key for h in hardware_by_gpu.values()}
        if len(keys) > 1:
            raise ConfigError(f"GPUs of different types {sorted(keys)} in one executor; use one executor per type")
        workers = workers or max(2, min(12, (os.cpu_count() or 4) - 2))
        per_gpu = max(1, workers // len(gpus))
        self._memory_fraction = (memory_fraction if memory_fraction is not None
                                 else min(0.9, max(0.25, 1.8 / per_gpu)))
        self._timing_cpus, self._worker_cpus = timing_cores(gpus)
        super().__init__(hardware_by_gpu[gpus[0]], device="cuda", gpus=list(gpus), workers=workers,
                         max_chunk=max_chunk, timeout_s=timeout_s, run_timeout_s=run_timeout_s,
                         options=options, cache_root=cache_root, hardware_by_gpu=hardware_by_gpu, on_raw=on_raw,
                         linger_s=linger_s)

    def _options_for(self, gpu: int | None, retry: bool) -> MeasureOptions:
        return MeasureOptions.from_dict({"gpu_memory_fraction": 0.9 if retry else self._memory_fraction,
                                         "timing_cpus": self._timing_cpus.get(gpu),
                                         "worker_cpus": self._worker_cpus or None, **self._options})

    def _wants_retry(self, m: Measurement, gpu: int | None) -> bool:
        return _retry_after_oom(m, self.hardware_by_gpu[gpu].memory_mib)


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
        self._options = MeasureOptions.from_dict({"seeds": [0, 1], **(options or {})})
        self._cache_root = cache_root

    def _measure_one(self, problem: Problem, candidate: Candidate) -> Measurement:
        if candidate.backend == "cuda":
            return _cuda_on_cpu(problem, candidate, self.hardware)
        job = MeasureJob(problem, self.hardware, device="cpu", timeout_s=self._timeout_s,
                         run_timeout_s=self._run_timeout_s, cpu_mem_bytes=self._mem, cache_root=self._cache_root,
                         options=self._options)
        return run_in_sandbox(job, candidate)


class CacheExecutor(Executor):
    """Answers from recorded measurements: the app's replay mode. No GPU needed.

    A candidate that was never measured on this hardware is reported as a crashed record whose
    reason says so (a replayed search only proposes cached candidates, so this means misuse).
    """

    def __init__(self, measurements: Iterable[Measurement], hardware: Hardware | str, contract=None):
        """`contract` (`workbench.problems.contract.Contract`; None: the default): only
        measurements recorded under it (its precision and tolerance) are replayed."""
        from workbench.problems.contract import Contract

        if isinstance(hardware, str):
            hardware = Hardware(key=hardware, name=f"replay of {hardware}", kind="replay")
        self.hardware = hardware
        self.contract = contract or Contract()
        ms = [m for m in measurements if m.hardware_key == hardware.key]
        self._by_id = {m.candidate_id: m for m in ms
                       if (m.precision, m.tolerance) == (self.contract.precision, self.contract.tolerance)}
        if not self._by_id:
            if ms:
                raise ConfigError(f"no recorded measurements for hardware {hardware.key!r} under the contract "
                                  f"{self.contract.describe()}; the recording holds "
                                  f"{sorted({(m.precision, m.tolerance) for m in ms})} (precision, tolerance): "
                                  "replay one of those, or measure live")
            raise ConfigError(f"no recorded measurements for hardware {hardware.key!r}; "
                              "load the shipped data first (`workbench dataset load-shipped`)")

    @classmethod
    def from_store(cls, store, hardware_key: str, contract=None) -> "CacheExecutor":
        """Replay `hardware_key` under `contract`; the hardware record is the one the
        measurements were taken on, so forecasters see the real GPU's SM count, memory and clocks."""
        ms = store.measurements(hardware_key=hardware_key)
        recorded = next((m.hardware for m in ms if m.hardware_json), None)
        return cls(ms, recorded or hardware_key, contract=contract)

    def __contains__(self, candidate_id: str) -> bool:
        return candidate_id in self._by_id

    @property
    def candidate_ids(self) -> set[str]:
        return set(self._by_id)

    def cannot_measure(self, candidate: Candidate) -> str:
        """Why this replay cannot measure `candidate` ("" when it can): it holds no recording of
        it. The search loop then stores nothing for it (`workbench/search/loop.py`)."""
        if candidate.id in self._by_id:
            return ""
        return (f"no recording of this kernel on {self.hardware.key.upper()}: a replay answers only kernels "
                "that were measured on a real GPU, so it was not measured")

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
