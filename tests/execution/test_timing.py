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
