"""Timing: CUDA events around device-synchronised regions, L2 flushed, inputs rotated,
reference and candidate interleaved sample by sample, adaptive stopping on the standard error
of the mean and the median's confidence interval, median with a 95% CI of the median.

Times are in milliseconds everywhere in this module. `interleaved_samples` takes the timer as
a function, so the sampling logic is tested on the CPU with a fake timer.
"""
from __future__ import annotations

import contextlib
import gc
import math
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np


@dataclass(frozen=True)
class TimingStats:
    median_ms: float
    ci_low_ms: float
    ci_high_ms: float
    mean_ms: float
    cv_pct: float       # coefficient of variation of the runs, in percent
    runs: int

    def to_dict(self) -> dict:
        return self.__dict__.copy()


def median_ci(samples: Sequence[float], z: float = 1.96) -> tuple[float, float, float]:
    """Median and a distribution-free ~95% CI from order statistics (binomial approximation)."""
    x = np.sort(np.asarray(samples, dtype=float))
    n = x.size
    med = float(np.median(x))
    if n < 3:
        return med, float(x[0]), float(x[-1])
    half = z * math.sqrt(n) / 2
    lo = max(int(math.floor(n / 2 - half)), 0)
    hi = min(int(math.ceil(n / 2 + half)), n - 1)
    return med, float(x[lo]), float(x[hi])


def summarise(samples: Sequence[float]) -> TimingStats:
    arr = np.asarray(samples, dtype=float)
    med, lo, hi = median_ci(arr)
    mean = float(arr.mean())
    cv = float(100 * arr.std(ddof=1) / mean) if arr.size > 1 and mean > 0 else 0.0
    return TimingStats(median_ms=med, ci_low_ms=lo, ci_high_ms=hi, mean_ms=mean, cv_pct=cv, runs=int(arr.size))


class L2Flusher:
    """Writes a buffer twice the size of the L2 cache so each run starts with a cold cache."""

    def __init__(self, device, l2_bytes: int | None = None):
        import torch

        if l2_bytes is None:
            props = torch.cuda.get_device_properties(device)
            l2_bytes = int(getattr(props, "L2_cache_size", 0) or 64 * 2**20)
        self._buf = torch.empty(max(2 * l2_bytes, 2**20) // 4, dtype=torch.int32, device=device)

    def __call__(self) -> None:
        self._buf.zero_()


def _precise_enough(samples: Sequence[float], target_sem_pct: float | None, target_ci_pct: float | None) -> bool:
    """Whether the standard error of the mean and the half-width of the median's CI are both
    under their targets (percent of the mean / median); a None target is not checked."""
    if target_sem_pct is None and target_ci_pct is None:
        return False
    arr = np.asarray(samples, dtype=float)
    mean = float(arr.mean()) if arr.size else 0.0
    if arr.size < 2 or not mean > 0:
        return False
    if target_sem_pct is not None and arr.std(ddof=1) / math.sqrt(arr.size) > target_sem_pct / 100 * mean:
        return False
    if target_ci_pct is not None:
        med, lo, hi = median_ci(arr)
        if med <= 0 or (hi - lo) / 2 > target_ci_pct / 100 * med:
            return False
    return True


def interleaved_samples(fns: Sequence[Callable[[Sequence], object]], input_sets: Sequence[Sequence],
                        timer: Callable[[Callable[[Sequence], object], Sequence], float], *,
                        warmup: int = 3, warmup_ms: float = 0.0, min_runs: int = 5, max_runs: int = 100,
                        target_sem_pct: float | None = None, target_ci_pct: float | None = None,
                        max_total_ms: float = 2000.0) -> list[list[float]]:
    """Samples (ms) of each of `fns`, taken in interleaved rounds; the core of all timing here.

    Round r times every function once, `timer(fn, inputs) -> ms`, on `input_sets[r % n]`, in
    the order of `fns` on even rounds and reversed on odd rounds: a clock that drifts (GPU
    boost, thermal state) or an order effect moves all functions alike, so their ratio holds.
    Warm-up rounds (discarded) run until at least `warmup` rounds and `warmup_ms` of timed
    work are done (at most 1000 rounds): compilation, autotuning, the caching allocator and
    the clocks settle before the first kept sample.
    Stops after `min_runs` rounds once every function's samples meet the precision targets
    (`target_sem_pct`: standard error of the mean, `target_ci_pct`: half-width of the median's
    95% CI, percent; None = not used), after `max_runs` rounds, or once the timed total passes
    `max_total_ms` per function.
    """
    if not fns or not input_sets:
        raise ValueError("interleaved_samples needs at least one function and one input set")
    order = list(range(len(fns)))
    spent, r = 0.0, 0
    while r < warmup or (spent < warmup_ms and r < 1000):
        for k in (order if r % 2 == 0 else order[::-1]):
            spent += timer(fns[k], input_sets[r % len(input_sets)])
        r += 1
    samples: list[list[float]] = [[] for _ in fns]
    total = 0.0
    for r in range(max_runs):
        inputs = input_sets[r % len(input_sets)]
        for k in (order if r % 2 == 0 else order[::-1]):
            ms = timer(fns[k], inputs)
            samples[k].append(ms)
            total += ms
        if r + 1 >= min_runs:
            if total >= max_total_ms * len(fns):
                break
            if all(_precise_enough(s, target_sem_pct, target_ci_pct) for s in samples):
                break
    return samples


class CudaEventTimer:
    """One sample of `fn(inputs)` on the current CUDA device, in ms, by CUDA events.

    Per sample: the L2 flush is enqueued, then (`hide_launch`) a GPU spin of a little longer
    than the host needs to enqueue the call, then the start event, the call and the end event;
    then the whole device is synchronised (work on any stream is finished before the next
    sample). While the GPU spins, the host enqueues the start event and all of the call's
    launches, so the events bracket the call's device work back to back: the sample is device
    time, not the Python and launch overhead of the host, which depends on how busy the CPU
    is (other workers compile beside the timer) and made single samples of microsecond kernels
    vary by tens of percent. The spin length follows a decaying maximum of the host's enqueue
    time of recent calls (at least 20 us, at most 5 ms).
    """

    MIN_SPIN_MS, MAX_SPIN_MS = 0.02, 5.0

    def __init__(self, flush: Callable[[], None] | None = None, hide_launch: bool = True):
        import torch

        self._torch = torch
        self._flush = flush
        self._spin = hide_launch and hasattr(torch.cuda, "_sleep")
        self._cycles_per_ms = 0.0
        self._host_ms = 0.0
        if self._spin:
            self._cycles_per_ms = self._calibrate()

    def _calibrate(self) -> float:
        """GPU spin cycles per millisecond, from one timed spin."""
        torch = self._torch
        cycles = 2_000_000
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        torch.cuda.synchronize()
        return cycles / max(start.elapsed_time(end), 1e-3)

    def __call__(self, fn: Callable[[Sequence], object], inputs: Sequence) -> float:
        torch = self._torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if self._flush is not None:
            self._flush()
        if self._spin:
            spin_ms = min(max(1.5 * self._host_ms, self.MIN_SPIN_MS), self.MAX_SPIN_MS)
            torch.cuda._sleep(int(spin_ms * self._cycles_per_ms))
        start.record()
        t0 = time.perf_counter()
        fn(inputs)
        self._host_ms = max(1e3 * (time.perf_counter() - t0), 0.9 * self._host_ms)
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end)


def wall_timer(fn: Callable[[Sequence], object], inputs: Sequence) -> float:
    """One wall-clock sample of `fn(inputs)` in ms (CPU runs)."""
    t0 = time.perf_counter()
    fn(inputs)
    return 1e3 * (time.perf_counter() - t0)


@contextlib.contextmanager
def no_gc():
    """No garbage-collector pause inside timed runs (collected once before)."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


#: Defaults of the CUDA timing: stop once the mean's standard error is under 0.5% and the
#: median's 95% CI is within +-1%, with at least 5 and at most 200 rounds, 1 s per function.
CUDA_DEFAULTS = dict(warmup=3, warmup_ms=30.0, min_runs=5, max_runs=200, target_sem_pct=0.5,
                     target_ci_pct=1.0, max_total_ms=1000.0)


def time_cuda_pair(reference: Callable[[Sequence], object], candidate: Callable[[Sequence], object],
                   input_sets: Sequence[Sequence], *, flush: Callable[[], None] | None = None,
                   **opts) -> tuple[TimingStats, TimingStats]:
    """Reference and candidate timed in alternating samples on the same inputs (see
    `interleaved_samples`, defaults `CUDA_DEFAULTS`); speedup = ratio of the medians."""
    import torch

    kw = {**CUDA_DEFAULTS, **opts}
    torch.cuda.synchronize()
    with no_gc():
        ref, cand = interleaved_samples([reference, candidate], input_sets, CudaEventTimer(flush), **kw)
    return summarise(ref), summarise(cand)


def time_cpu_pair(reference: Callable[[Sequence], object], candidate: Callable[[Sequence], object],
                  input_sets: Sequence[Sequence], *, warmup: int = 1, min_runs: int = 3, max_runs: int = 20,
                  max_total_ms: float = 2000.0) -> tuple[TimingStats, TimingStats]:
    """Wall-clock timing of both in alternating samples (CPU interpreter runs, hardware "cpu")."""
    with no_gc():
        ref, cand = interleaved_samples([reference, candidate], input_sets, wall_timer, warmup=warmup,
                                        min_runs=min_runs, max_runs=max_runs, max_total_ms=max_total_ms)
    return summarise(ref), summarise(cand)


def time_cuda(fn: Callable[[Sequence], object], input_sets: Sequence[Sequence], *,
              warmup: int = 3, min_runs: int = 5, max_runs: int = 100, target_sem_pct: float = 0.5,
              max_total_ms: float = 2000.0, flush: Callable[[], None] | None = None) -> TimingStats:
    """Time one function alone on the current CUDA device (`CudaEventTimer` per sample, input
    sets rotated); stops like `interleaved_samples` on the standard error of the mean."""
    import torch

    torch.cuda.synchronize()
    with no_gc():
        (samples,) = interleaved_samples([fn], input_sets, CudaEventTimer(flush), warmup=warmup,
                                         min_runs=min_runs, max_runs=max_runs, target_sem_pct=target_sem_pct,
                                         max_total_ms=max_total_ms)
    return summarise(samples)


def time_cpu(fn: Callable[[Sequence], object], input_sets: Sequence[Sequence], *, warmup: int = 1,
             min_runs: int = 3, max_runs: int = 20, max_total_ms: float = 2000.0) -> TimingStats:
    """Wall-clock timing for CPU (interpreter) runs; labelled hardware "cpu", never mixed with GPU."""
    (samples,) = interleaved_samples([fn], input_sets, wall_timer, warmup=warmup, min_runs=min_runs,
                                     max_runs=max_runs, max_total_ms=max_total_ms)
    return summarise(samples)
