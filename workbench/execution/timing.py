"""Timing: CUDA events around device-synchronised regions, L2 flushed, inputs rotated,
adaptive stopping on the standard error of the mean, median with a 95% CI of the median.

Times are in milliseconds everywhere in this module.
"""
from __future__ import annotations

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


def time_cuda(fn: Callable[[Sequence], object], input_sets: Sequence[Sequence], *,
              warmup: int = 3, min_runs: int = 5, max_runs: int = 100, target_sem_pct: float = 0.5,
              max_total_ms: float = 2000.0, flush: Callable[[], None] | None = None) -> TimingStats:
    """Time `fn(inputs)` on the current CUDA device.

    Each run: flush L2, synchronise, record a start event, call, record an end event. Input
    sets rotate between runs so no run reuses the previous run's operands in cache. Stops
    after `min_runs` once the standard error of the mean falls under `target_sem_pct` percent
    of the mean, after `max_runs`, or once the timed total passes `max_total_ms`.
    """
    import torch

    for i in range(warmup):
        fn(input_sets[i % len(input_sets)])
    torch.cuda.synchronize()
    samples: list[float] = []
    total = 0.0
    for i in range(max_runs):
        inputs = input_sets[i % len(input_sets)]
        if flush is not None:
            flush()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        fn(inputs)
        end.record()
        torch.cuda.synchronize()
        ms = start.elapsed_time(end)
        samples.append(ms)
        total += ms
        if len(samples) >= min_runs:
            arr = np.asarray(samples)
            sem = arr.std(ddof=1) / math.sqrt(arr.size)
            if sem <= target_sem_pct / 100 * arr.mean() or total >= max_total_ms:
                break
    return summarise(samples)


def time_cpu(fn: Callable[[Sequence], object], input_sets: Sequence[Sequence], *, warmup: int = 1,
             min_runs: int = 3, max_runs: int = 20, max_total_ms: float = 2000.0) -> TimingStats:
    """Wall-clock timing for CPU (interpreter) runs; labelled hardware "cpu", never mixed with GPU."""
    for i in range(warmup):
        fn(input_sets[i % len(input_sets)])
    samples, total = [], 0.0
    for i in range(max_runs):
        t0 = time.perf_counter()
        fn(input_sets[i % len(input_sets)])
        ms = 1e3 * (time.perf_counter() - t0)
        samples.append(ms)
        total += ms
        if len(samples) >= min_runs and total >= max_total_ms:
            break
    return summarise(samples)
