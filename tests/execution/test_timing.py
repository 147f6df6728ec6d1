"""Timing statistics: median with a CI of the median, CV, adaptive stopping."""
from __future__ import annotations

import time

import numpy as np
import pytest
import torch

from workbench.execution import timing


def test_median_ci_brackets_the_median_and_narrows_with_n():
    rng = np.random.default_rng(0)
    small = rng.normal(10, 1, 20)
    large = rng.normal(10, 1, 400)
    for x in (small, large):
        med, lo, hi = timing.median_ci(x)
        assert lo <= med <= hi
        assert med == pytest.approx(float(np.median(x)))
    w_small = np.subtract(*timing.median_ci(small)[2:0:-1])
    w_large = np.subtract(*timing.median_ci(large)[2:0:-1])
    assert w_large < w_small


def test_median_ci_covers_the_true_median_about_95_percent():
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(400):
        med, lo, hi = timing.median_ci(rng.exponential(1.0, 41))
        hits += lo <= np.log(2) <= hi
    assert 0.90 <= hits / 400 <= 0.995


def test_summarise_cv_and_runs():
    s = timing.summarise([1.0, 1.0, 1.0, 1.0])
    assert s.cv_pct == 0 and s.runs == 4 and s.median_ms == 1.0
    s = timing.summarise([1.0, 2.0, 3.0])
    assert s.cv_pct == pytest.approx(50.0)
    assert set(s.to_dict()) == {"median_ms", "ci_low_ms", "ci_high_ms", "mean_ms", "cv_pct", "runs"}


def test_time_cpu_rotates_inputs_and_respects_limits():
    seen = []

    def fn(inputs):
        seen.append(inputs[0])
        time.sleep(0.002)

    stats = timing.time_cpu(fn, [[0], [1], [2]], warmup=1, min_runs=3, max_runs=7, max_total_ms=1e9)
    assert stats.runs == 7
    assert seen[1:] == [0, 1, 2, 0, 1, 2, 0]
    assert stats.median_ms >= 2.0
    quick = timing.time_cpu(fn, [[0]], min_runs=3, max_runs=100, max_total_ms=10)
    assert 3 <= quick.runs < 100


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_time_cuda_stops_adaptively_and_sees_sizes():
    x = torch.randn(4096, 4096, device="cuda")
    flush = timing.L2Flusher(torch.device("cuda"))
    small = timing.time_cuda(lambda i: i[0][:256].sum(), [[x]], flush=flush)
    big = timing.time_cuda(lambda i: i[0] @ i[0], [[x]], flush=flush)
    assert 5 <= small.runs <= 100 and 5 <= big.runs <= 100
    assert big.median_ms > 5 * small.median_ms
    assert big.ci_low_ms <= big.median_ms <= big.ci_high_ms


class FakeClock:
    """A fake timer: each call "takes" base[fn] x drift(call number) x noise, in ms, and is logged."""

    def __init__(self, base: dict, drift=lambda n: 1.0, noise_pct: float = 0.0, seed: int = 0):
        self.base, self.drift, self.noise = base, drift, noise_pct / 100
        self.calls: list[tuple[str, int]] = []
        self.rng = np.random.default_rng(seed)

    def __call__(self, fn, inputs) -> float:
        fn(inputs)
        self.calls.append((fn.__name__, inputs[0]))
        ms = self.base[fn.__name__] * self.drift(len(self.calls))
        return float(ms * (1 + self.noise * self.rng.standard_normal()))


def ref(inputs):
    return None


def cand(inputs):
    return None


def test_interleaved_rounds_alternate_order_and_rotate_inputs():
    clock = FakeClock({"ref": 1.0, "cand": 0.5})
    ref_s, cand_s = timing.interleaved_samples([ref, cand], [[0], [1], [2]], clock, warmup=2, min_runs=4,
                                               max_runs=4)
    assert len(ref_s) == len(cand_s) == 4
    # Two warm-up rounds (discarded), then four kept; order flips every round, inputs rotate.
    assert clock.calls == [("ref", 0), ("cand", 0), ("cand", 1), ("ref", 1),
                           ("ref", 0), ("cand", 0), ("cand", 1), ("ref", 1),
                           ("ref", 2), ("cand", 2), ("cand", 0), ("ref", 0)]
    assert ref_s == [1.0] * 4 and cand_s == [0.5] * 4


def test_warmup_runs_until_warmup_ms_is_spent():
    clock = FakeClock({"ref": 1.0, "cand": 1.0})
    timing.interleaved_samples([ref, cand], [[0]], clock, warmup=1, warmup_ms=10, min_runs=1, max_runs=1)
    assert len(clock.calls) == 2 * 5 + 2  # 5 warm-up rounds of 2 ms, then one kept round


def test_interleaving_cancels_a_drifting_clock():
    # The GPU clock slows by 30% over the measurement; the true speedup is exactly 2.
    drift = lambda n: 1.0 + 0.3 * n / 400  # noqa: E731
    clock = FakeClock({"ref": 2.0, "cand": 1.0}, drift=drift, noise_pct=2)
    r, c = timing.interleaved_samples([ref, cand], [[0], [1]], clock, warmup=0, min_runs=200, max_runs=200,
                                      max_total_ms=1e9)
    interleaved = np.median(r) / np.median(c)
    # The same clock timing one function after the other (the old way) is off by ~15%.
    seq = FakeClock({"ref": 2.0, "cand": 1.0}, drift=drift, noise_pct=2)
    (r2,) = timing.interleaved_samples([ref], [[0], [1]], seq, warmup=0, min_runs=200, max_runs=200,
                                       max_total_ms=1e9)
    (c2,) = timing.interleaved_samples([cand], [[0], [1]], seq, warmup=0, min_runs=200, max_runs=200,
                                       max_total_ms=1e9)
    sequential = np.median(r2) / np.median(c2)
    assert abs(interleaved / 2 - 1) < 0.01
    assert abs(sequential / 2 - 1) > 0.08


def test_adaptive_stopping_on_precision_and_budget():
    quiet = FakeClock({"ref": 1.0, "cand": 1.0}, noise_pct=0.1)
    r, _ = timing.interleaved_samples([ref, cand], [[0]], quiet, warmup=0, min_runs=5, max_runs=200,
                                      target_sem_pct=0.5, target_ci_pct=1.0)
    assert len(r) == 5  # already precise at min_runs
    noisy = FakeClock({"ref": 1.0, "cand": 1.0}, noise_pct=10, seed=1)
    r, _ = timing.interleaved_samples([ref, cand], [[0]], noisy, warmup=0, min_runs=5, max_runs=200,
                                      target_sem_pct=0.5, target_ci_pct=1.0, max_total_ms=1e9)
    assert 100 < len(r) <= 200  # SEM 0.5% at CV 10% needs ~400 runs: runs to the cap
    capped = FakeClock({"ref": 1.0, "cand": 1.0}, noise_pct=10, seed=1)
    r, _ = timing.interleaved_samples([ref, cand], [[0]], capped, warmup=0, min_runs=5, max_runs=200,
                                      target_sem_pct=0.5, max_total_ms=20)
    assert 18 <= len(r) <= 23  # 20 ms per function of ~1 ms runs
    with pytest.raises(ValueError):
        timing.interleaved_samples([], [[0]], quiet)


def test_time_cpu_pair_times_both_alike():
    def slow(inputs):
        time.sleep(0.004)

    def fast(inputs):
        time.sleep(0.001)

    r, c = timing.time_cpu_pair(slow, fast, [[0], [1]], warmup=1, min_runs=3, max_runs=6, max_total_ms=1e9)
    assert r.runs == c.runs == 6
    assert r.median_ms > 2 * c.median_ms
