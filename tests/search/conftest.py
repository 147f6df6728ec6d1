"""Shared fixtures for the search tests: a synthetic replay pool and small real test doubles.

The pool is synthetic (random lineage and speedups) and lives only in tests; it is never
written to benchmarks/results.
"""
from __future__ import annotations

import hashlib
import os
import random

import pytest

os.environ.setdefault("TRITON_INTERPRET", "1")

from workbench import bins  # noqa: E402
from workbench.execution.executors import CacheExecutor  # noqa: E402
from workbench.forecast.base import Forecaster  # noqa: E402
from workbench.records import Candidate, Forecast, Measurement, Problem, Status  # noqa: E402
from workbench.store import Store  # noqa: E402


def synthetic_pool(problem_id: str = "L1/99_synthetic", n: int = 80, seed: int = 0, hw: str = "h100",
                   fail_rate: float = 0.15):
    """A problem, n candidates in a random tree (4 roots) and one measurement each on `hw`.

    A child's log2 speedup is its parent's plus noise, so lineage carries signal."""
    rng = random.Random(seed)
    problem = Problem(id=problem_id, level=1, name=problem_id.split("/")[-1],
                      source="class Model: pass\ndef get_inputs(): return []\ndef get_init_inputs(): return []\n")
    cands: list[Candidate] = []
    logs: dict[str, float] = {}
    ms: list[Measurement] = []
    for i in range(n):
        parent = None if i < 4 else cands[rng.randrange(len(cands))]
        src = f"import torch\nclass ModelNew(torch.nn.Module):\n    VARIANT = {seed * 100000 + i}\n"
        c = Candidate.from_source(problem_id, src, parent_id=parent.id if parent else None,
                                  generation=parent.generation + 1 if parent else 0,
                                  origin="synthetic")
        cands.append(c)
        base = logs.get(parent.id, 0.0) if parent else rng.gauss(-0.5, 0.5)
        logs[c.id] = base + rng.gauss(0.1, 0.5)
        if rng.random() < fail_rate and i >= 4:
            ms.append(Measurement(candidate_id=c.id, problem_id=problem_id, hardware_key=hw,
                                  status=Status.INCORRECT, reason="synthetic failure"))
        else:
            s = 2.0 ** logs[c.id]
            ms.append(Measurement(candidate_id=c.id, problem_id=problem_id, hardware_key=hw, status=Status.OK,
                                  reference_ms=1.0, candidate_ms=1.0 / s, speedup=s))
    return problem, cands, ms


def synthetic_db(tmp_path):
    """A database file with two synthetic problems' pools (L1/90_synth_a, L1/91_synth_b)."""
    db = tmp_path / "cli.sqlite"
    with Store(db) as st:
        for i, pid in enumerate(("L1/90_synth_a", "L1/91_synth_b")):
            problem, cands, ms = synthetic_pool(pid, n=60, seed=i)
            st.put_problem(problem)
            st.put_candidates(cands)
            st.put_measurements(ms)
    return db


class NoisyOracleForecaster(Forecaster):
    """Test double: reads the measured bin and blurs it. With probability `noise` (decided by a
    hash of the candidate id, so deterministic) the peak is moved one bin."""

    def __init__(self, measurements, noise: float = 0.3, peak: float = 0.7, name: str = "oracle-test"):
        self.name = name
        self._m = {m.candidate_id: m for m in measurements}
        self.noise, self.peak = noise, peak

    def forecast(self, problem, candidate, hardware, parent=None, relative_to="reference"):
        m = self._m.get(candidate.id)
        u = int(hashlib.sha256(candidate.id.encode()).hexdigest()[:8], 16) / 2**32
        if m is None or not m.ok:
            b = 3
        else:
            b = m.bin
        if u < self.noise:
            b = min(7, max(0, b + (1 if u < self.noise / 2 else -1)))
        conf = self.peak if u > 0.5 else 0.4
        probs = [(1 - conf) / 7] * bins.N_BINS
        probs[b] = conf
        return Forecast(forecaster=self.name, candidate_id=candidate.id, problem_id=problem.id,
                        hardware_key=hardware.key, probabilities=tuple(probs))


class ConfidencePolicy:
    """Test double of a selective policy: trust when max probability >= threshold, once calibrated."""

    def __init__(self, threshold: float = 0.6):
        self.threshold = threshold
        self.calls = 0

    def calibrate(self, forecasts, measurements):
        self.calls += 1
        return self

    def decide(self, f):
        return "trust" if f.confidence >= self.threshold else "defer"


@pytest.fixture
def pool():
    return synthetic_pool()


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "search.sqlite")
    yield s
    s.close()


@pytest.fixture
def replay(pool):
    problem, cands, ms = pool
    return problem, cands, ms, CacheExecutor(ms, "h100")
