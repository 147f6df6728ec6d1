"""The certified skip rule: its confidence, its conformal certificate on exchangeable synthetic
pairs, its plans, a search over a small synthetic landscape, and its training-only calibration."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats

from workbench import bins
from workbench.dataset.sources import RecordSet
from workbench.errors import ConfigError
from workbench.execution.executors import CacheExecutor
from workbench.families import get_family
from workbench.forecast.base import BatchForecaster
from workbench.landscape import LandscapeGenerator, enumerate_landscape, load_protocol
from workbench.landscape.trust import calibration_pairs, problem_folds, sample_pairs
from workbench.problems import get_problem
from workbench.records import Candidate, Forecast, Measurement, Status
from workbench.search import SearchRun
from workbench.search.methods import (CertifiedSkip, MethodContext, SkipCertificate, beat_confidence,
                                      beat_losses, certify_skip, make_method)
from workbench.store import Store

HELD, TRAIN_A, TRAIN_B, TRAIN_C = "L1/08_max_rows", "L1/07_sum_rows", "L1/01_softmax", "L1/12_layer_norm"


def gaussian_bins(mu_log2: np.ndarray, sigma: float) -> np.ndarray:
    """(n, 8) bin masses of N(mu, sigma) in log2 speedup."""
    edges = np.log2(np.asarray(bins.EDGES))
    cdf = stats.norm.cdf((edges[None, :] - np.asarray(mu_log2)[:, None]) / sigma)
    full = np.hstack([np.zeros((len(cdf), 1)), cdf, np.ones((len(cdf), 1))])
    p = np.diff(full, axis=1) + 1e-9
    return p / p.sum(axis=1, keepdims=True)


class NoisyOracle(BatchForecaster):
    """Test double of a decent forecaster: a Gaussian in log2 speedup around the recorded speedup
    plus a fixed per-candidate error (seeded by the candidate id)."""

    name = "noisy-oracle"

    def __init__(self, speed: dict[str, float], sigma: float = 0.4):
        self.speed, self.sigma = speed, sigma

    def forecast_batch(self, items, hardware, relative_to="reference", parents=None):
        out = []
        for p, c in items:
            err = random.Random(c.id).gauss(0, self.sigma)
            s = self.speed.get(c.id, 1.0)
            mu = math.log2(s if s == s and s > 0 else 0.5) + err
            out.append(Forecast(forecaster=self.name, candidate_id=c.id, problem_id=p.id, hardware_key=hardware.key,
                                probabilities=tuple(gaussian_bins(np.array([mu]), self.sigma)[0]),
                                relative_to=relative_to))
        return out


def _landscape(pid, seed, **restrict):
    fam = get_family(pid).restricted(**restrict)
    land = enumerate_landscape(fam)
    rng = random.Random(seed)
    ms = []
    for i, c in enumerate(land.candidates):
        if i % 17 == 5:  # a few failed points: they never beat anything
            ms.append(Measurement(candidate_id=c.id, problem_id=pid, hardware_key="h100", status=Status.INCORRECT,
                                  reason="synthetic"))
            continue
        s = rng.lognormvariate(0, 0.6)
        ms.append(Measurement(candidate_id=c.id, problem_id=pid, hardware_key="h100", status=Status.OK,
                              reference_ms=1.0, candidate_ms=1.0 / s, speedup=s, reason="synthetic"))
    return land, ms


ROWS = dict(algo=["loop_vec", "loop_scalar"], block=[256, 512, 1024], rows=[1, 2], warps=[1, 2, 4], stages=[1, 3],
            acc=["fp32"])


@pytest.fixture(scope="module")
def lands():
    out = {HELD: _landscape(HELD, 1, **ROWS), TRAIN_A: _landscape(TRAIN_A, 2, **ROWS),
           TRAIN_B: _landscape(TRAIN_B, 3, algo=["online"], block=[256, 512, 1024], rows=[1, 2], warps=[1, 2, 4],
                               stages=[1, 3], exp=["exp"]),
           TRAIN_C: _landscape(TRAIN_C, 4, algo=["loop"], block=[256, 512, 1024], rows=[1, 2], warps=[1, 2, 4],
                               stages=[1, 3], resid=["recompute"])}
    return out


# ------------------------------------------------------------------ confidence and certificate
def test_beat_confidence_is_the_bin_cdf_at_edges_and_monotone():
    p = np.full((1, 8), 1 / 8)
    assert beat_confidence(p, 1.0)[0] == pytest.approx(4 / 8)  # bins 0..3 lie at or below 1.0x
    assert beat_confidence(p, 4.0)[0] == pytest.approx(7 / 8)
    refs = np.geomspace(0.05, 20, 50)
    conf = [float(beat_confidence(p, r)[0]) for r in refs]
    assert conf[0] == 0.0 and conf[-1] == 1.0 and all(a <= b for a, b in zip(conf, conf[1:]))
    assert float(beat_confidence(p[0], 2.0, margin=0.0)) < float(beat_confidence(p[0], 2.0, margin=0.5))
    with pytest.raises(ValueError):
        beat_confidence(p, 0.0)


def test_beat_losses_failed_child_never_beats():
    assert beat_losses([2.0, 1.0, None, float("nan"), 1.05], [1.0, 1.0, 1.0, 1.0, 1.0], margin=0.02).tolist() == \
        [1.0, 0.0, 0.0, 0.0, 1.0]


def _synthetic_pairs(rng: np.random.Generator, n: int):
    """Exchangeable pairs: parent log2 speedup, child = parent + a per-child shift; the forecast
    is a Gaussian around the child's truth plus an error it does not know (so it is miscalibrated)."""
    parent = rng.normal(0.0, 0.8, n)
    child = parent + rng.normal(-0.4, 0.6, n)
    mu = child + rng.normal(0.0, 0.5, n)
    failed = rng.random(n) < 0.05
    true = np.where(failed, np.nan, 2.0 ** child)
    return gaussian_bins(mu, 0.3), 2.0 ** parent, true


def test_certificate_keeps_the_observed_risk_under_target_on_exchangeable_data():
    target, delta, held = 0.1, 0.1, 0
    draws, trusted_shares = 30, []
    for d in range(draws):
        rng = np.random.default_rng(d)
        cert = certify_skip(*_synthetic_pairs(rng, 1500), target_risk=target, delta=delta)
        probs, ref, true = _synthetic_pairs(rng, 4000)
        trusted = beat_confidence(probs, ref) >= cert.threshold
        trusted_shares.append(trusted.mean())
        risk = beat_losses(true[trusted], ref[trusted]).mean() if trusted.any() else 0.0
        held += risk <= target
    assert held >= 0.8 * draws  # the guarantee: fails in at most delta of draws (plus test-set noise)
    assert np.median(trusted_shares) > 0.2  # and it does decide something: a real share is skipped


def test_certificate_of_an_uninformative_forecast_trusts_little_or_nothing():
    rng = np.random.default_rng(0)
    n = 2000
    ref = np.ones(n)
    true = 2.0 ** rng.normal(0.0, 1.0, n)  # half the children beat the parent
    cert = certify_skip(np.full((n, 8), 1 / 8), ref, true, target_risk=0.1, delta=0.1)
    assert cert.threshold == float("inf") and cert.coverage == 0.0
    with pytest.raises(ConfigError):
        certify_skip(np.zeros((0, 8)), [], [])


# ------------------------------------------------------------------ plans
def _children(n):
    return [Candidate.from_source("L1/08_max_rows", f"x = {i}\n", origin="test") for i in range(n)]


def _fc(c, mu):
    return Forecast(forecaster="t", candidate_id=c.id, problem_id=c.problem_id, hardware_key="h100",
                    probabilities=tuple(gaussian_bins(np.array([mu]), 0.2)[0]))


def test_plan_skips_certified_children_and_measures_the_top_k_of_the_rest():
    kids = _children(16)
    mus = [-2.0 + 0.25 * i for i in range(16)]  # the last ones are forecast to beat the 1x parent
    fcs = {c.id: _fc(c, mu) for c, mu in zip(kids, mus)}
    cert = SkipCertificate(threshold=0.9, target_risk=0.1, delta=0.1, margin=0.0, n_calibration=100,
                           coverage=0.5, risk=0.05)
    ctx = MethodContext(parent_speedup=1.0, budget_left=64)
    plan = CertifiedSkip(4, 4, certificate=cert).plan(kids, fcs, ctx)
    assert plan.trust and not set(plan.trust) & set(plan.measure)
    conf = {c.id: float(beat_confidence(fcs[c.id].probabilities, 1.0)) for c in kids}
    assert all(conf[cid] >= 0.9 for cid in plan.trust) and all(conf[cid] < 0.9 for cid in plan.measure + plan.drop)
    assert plan.measure == [c.id for c in reversed(kids)][:4]  # highest expected first
    assert set(plan.measure) | set(plan.trust) | set(plan.drop) == {c.id for c in kids}
    # everything certified: nothing is measured (min_measure=0), or the best-ranked with min_measure=1
    low = {c.id: _fc(c, -3.0) for c in kids}
    assert CertifiedSkip(4, 4, certificate=cert).plan(kids, low, ctx).measure == []
    one = CertifiedSkip(4, 4, certificate=cert, min_measure=1).plan(kids, low, ctx)
    assert len(one.measure) == 1 and one.measure[0] not in one.trust
    # no certificate, or one that certified nothing: screen_topk's plan
    for c0 in (None, SkipCertificate(float("inf"), 0.1, 0.1, 0.0, 10, 0.0, 0.0)):
        p = CertifiedSkip(4, 4, certificate=c0).plan(kids, fcs, ctx)
        assert not p.trust and p.measure == make_method("screen_topk", 4, 4).plan(kids, fcs, ctx).measure


# ------------------------------------------------------------------ a search over a synthetic landscape
def test_search_never_measures_a_trusted_child_and_spends_the_budget_exactly(lands, tmp_path):
    land, ms = lands[HELD]
    speed = {m.candidate_id: (m.speedup if m.ok else float("nan")) for m in ms}
    cert = SkipCertificate(threshold=0.8, target_risk=0.1, delta=0.1, margin=0.0, n_calibration=100,
                           coverage=0.5, risk=0.05)
    for budget in (8, 13, 20):
        with Store(tmp_path / f"s{budget}.sqlite") as store:
            ex = CacheExecutor(ms, "h100")
            run = SearchRun(store, get_problem(HELD), ex, LandscapeGenerator([land], ex.candidate_ids),
                            NoisyOracle(speed), make_method("certified_skip", 4, 4, certificate=cert), budget=budget,
                            seed=budget, adapt_forecasts=False)
            summary = run.run()
            events = store.events(run.search_id)
        trusted = {e["payload"]["candidate_id"] for e in events if e["kind"] == "trusted"}
        measured = [e["payload"]["measurement"]["candidate_id"] for e in events if e["kind"] == "measured"]
        assert summary["finish_reason"] == "budget spent" and summary["gpu_measurements"] == budget == len(measured)
        assert trusted and not trusted & set(measured)
        assert summary["trusted"] == len(trusted)


# ------------------------------------------------------------------ training-only calibration
def _records(lands):
    rs = RecordSet()
    for pid, (land, ms) in lands.items():
        rs.problems.append(get_problem(pid))
        rs.candidates += land.candidates
        rs.measurements += ms
    return rs


def test_calibration_pairs_are_out_of_fold_and_never_touch_held_out(lands):
    speed = {m.candidate_id: (m.speedup if m.ok else float("nan")) for _, ms in lands.values() for m in ms}
    fitted_on: list[set[str]] = []

    def make(records):
        fitted_on.append({m.problem_id for m in records.measurements})
        return NoisyOracle(speed)

    proto = load_protocol()
    hw = CacheExecutor([m for _, ms in lands.values() for m in ms], "h100").hardware
    pairs = calibration_pairs({pid: land for pid, (land, _) in lands.items()}, _records(lands), make, hw, proto,
                              parents=6, children=5, folds=3)
    probs = {p.problem_id for p in pairs.pairs}
    assert probs == {TRAIN_A, TRAIN_B, TRAIN_C} and HELD not in probs
    assert len(fitted_on) == 3
    for group, seen in zip(pairs.folds, fitted_on):
        assert not seen & set(group) and HELD not in seen  # each fold forecast by a fit without it
    assert pairs.probabilities.shape == (len(pairs), 8) and len(pairs) <= 3 * 6 * 5
    for p in pairs.pairs:
        land = lands[p.problem_id][0]
        assert p.child_id in {cid for cid, _ in land.neighbourhood(p.parent_id)}
        assert p.parent_speedup == speed[p.parent_id]
    cert = certify_skip(pairs.probabilities, pairs.parent_speedups, pairs.child_speedups, 0.2, 0.2)
    assert cert.n_calibration == len(pairs)


def test_sample_pairs_is_deterministic_and_folds_need_problems(lands):
    land, ms = lands[TRAIN_A]
    assert sample_pairs(land, ms, 4, 3, seed=1) == sample_pairs(land, ms, 4, 3, seed=1)
    assert all(math.isfinite(p.parent_speedup) for p in sample_pairs(land, ms, 10, 3))
    with pytest.raises(ConfigError):
        problem_folds(["a", "b"], 3)


# ------------------------------------------------------------------ judged against the search's best
def test_best_reference_pairs_keep_the_draw_and_raise_the_reference(lands):
    land, ms = lands[TRAIN_A]
    speed = {m.candidate_id: (m.speedup if m.ok else float("nan")) for m in ms}
    parent_pairs = sample_pairs(land, ms, 8, 4, seed=2)
    best_pairs = sample_pairs(land, ms, 8, 4, seed=2, reference="best")
    assert best_pairs == sample_pairs(land, ms, 8, 4, seed=2, reference="best")  # deterministic
    # the same parents and children: only what each child is judged against differs
    assert [(p.parent_id, p.child_id) for p in best_pairs] == [(p.parent_id, p.child_id) for p in parent_pairs]
    assert all(p.reference_speedup == p.parent_speedup for p in parent_pairs)
    assert all(p.reference_speedup >= p.parent_speedup for p in best_pairs)
    assert any(p.reference_speedup > p.parent_speedup for p in best_pairs)
    good = sorted(s for s in speed.values() if math.isfinite(s))
    assert all(p.reference_speedup in good for p in best_pairs)  # a measured point's speedup
    with pytest.raises(ConfigError, match="reference is one of parent, best"):
        sample_pairs(land, ms, 8, 4, reference="median")


def test_best_reference_calibration_and_certificate_carry_the_reference(lands):
    speed = {m.candidate_id: (m.speedup if m.ok else float("nan")) for _, ms in lands.values() for m in ms}
    hw = CacheExecutor([m for _, ms in lands.values() for m in ms], "h100").hardware
    pairs = calibration_pairs({pid: land for pid, (land, _) in lands.items()}, _records(lands),
                              lambda rs: NoisyOracle(speed), hw, load_protocol(), parents=6, children=5, folds=3,
                              reference="best")
    assert pairs.reference == "best" and pairs.describe()["reference"] == "best"
    assert np.all(pairs.reference_speedups >= pairs.parent_speedups)
    cert = certify_skip(pairs.probabilities, pairs.reference_speedups, pairs.child_speedups, 0.2, 0.2,
                        reference="best")
    assert cert.reference == "best" and cert.to_dict()["reference"] == "best"
    with pytest.raises(ConfigError, match="parent or best"):
        SkipCertificate(0.9, 0.1, 0.1, 0.0, 10, 0.5, 0.05, reference="median")


def test_a_best_reference_certificate_judges_children_against_the_search_best():
    kids = _children(8)
    fcs = {c.id: _fc(c, mu) for c, mu in zip(kids, [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75])}  # log2 1x .. 3.4x
    ctx = MethodContext(parent_speedup=1.0, budget_left=64, best_speedup=4.0)
    by_parent = SkipCertificate(0.9, 0.1, 0.1, 0.0, 100, 0.5, 0.05)
    by_best = SkipCertificate(0.9, 0.1, 0.1, 0.0, 100, 0.5, 0.05, reference="best")
    trust_parent = set(CertifiedSkip(4, 4, certificate=by_parent).plan(kids, fcs, ctx).trust)
    trust_best = set(CertifiedSkip(4, 4, certificate=by_best).plan(kids, fcs, ctx).trust)
    conf_best = {c.id: float(beat_confidence(fcs[c.id].probabilities, 4.0)) for c in kids}
    assert trust_best == {cid for cid, v in conf_best.items() if v >= 0.9} and len(trust_best) >= 6
    assert len(trust_parent) < len(trust_best)  # against the 1x parent almost nothing is surely worse
    # before any correct measurement there is no best: nothing is trusted
    assert not CertifiedSkip(4, 4, certificate=by_best).plan(kids, fcs, MethodContext(1.0, 64)).trust
