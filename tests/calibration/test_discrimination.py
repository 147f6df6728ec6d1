"""Discriminative metrics on hand-worked cases and on random / constant forecasters."""
from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.calibration import discrimination as d
from workbench.calibration import metrics
from workbench.calibration.errors import MetricInputError


# ----------------------------------------------------------------------------- pairs
def test_pair_accuracy_by_hand():
    # speedups 1, 1.2, 2, 4 in one problem; pairs >= 1.25x apart: (1,2) (1,4) (1.2,2) (1.2,4) (2,4)
    v = [1.0, 1.2, 2.0, 4.0]
    s = [0.0, 5.0, 1.0, 3.0]  # orders (1,2) right, (1,4) right, (1.2,2) wrong, (1.2,4) wrong, (2,4) right
    assert d.pair_accuracy(s, v, ["a"] * 4, 1.25) == pytest.approx(3 / 5)
    # at 1.10 the pair (1, 1.2) counts too, and it is ordered right
    assert d.pair_accuracy(s, v, ["a"] * 4, 1.10) == pytest.approx(4 / 6)


def test_pair_ties_in_score_count_half_and_pairs_never_cross_problems():
    v = [1.0, 2.0, 1.0, 2.0]
    s = [0.0, 0.0, 1.0, 0.0]  # problem a: tie -> 0.5; problem b: wrong -> 0
    assert d.pair_accuracy(s, v, ["a", "a", "b", "b"], 1.25) == pytest.approx(0.25)
    assert math.isnan(d.pair_accuracy([0, 1], [1.0, 1.1], ["a", "a"], 1.25))


def test_constant_scores_are_exactly_half_and_perfect_scores_one():
    rng = np.random.default_rng(0)
    v = np.exp(rng.normal(size=200))
    g = np.repeat(np.arange(10), 20)
    assert d.pair_accuracy(np.zeros(200), v, g, 1.25) == 0.5
    assert d.pair_accuracy(np.log(v), v, g, 1.25) == 1.0
    assert d.pair_accuracy(-np.log(v), v, g, 1.25) == 0.0


def test_random_scores_average_half():
    rng = np.random.default_rng(1)
    v = np.exp(rng.normal(size=300))
    g = np.repeat(np.arange(10), 30)
    accs = [d.pair_accuracy(rng.normal(size=300), v, g, 1.25) for _ in range(200)]
    assert np.mean(accs) == pytest.approx(0.5, abs=0.01)


# ----------------------------------------------------------------------------- screening
def test_screen_group_by_hand():
    v = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    assert d.screen_group(np.array([5, 4, 3, 2, 1.0]), v, 2) == (0.0, pytest.approx(2 / 5))
    assert d.screen_group(v, v, 2) == (1.0, 1.0)
    assert d.screen_group(np.zeros(3), v[:3], 4) == (1.0, 1.0)  # a group of n <= k is all measured


def test_screen_group_ties_are_broken_at_random_in_expectation():
    # All tied: picking 2 of 4 at random holds the best with probability 2/4; the expected max
    # of 2 of (4, 3, 2, 1): max 4 w.p. 3/6, 3 w.p. 2/6, 2 w.p. 1/6 -> 20/6
    v = np.array([1.0, 2.0, 3.0, 4.0])
    hit, ratio = d.screen_group(np.zeros(4), v, 2)
    assert hit == pytest.approx(0.5)
    assert ratio == pytest.approx((20 / 6) / 4)
    # one clear top pick (value 1), then 1 of the 3 tied others at random
    hit, ratio = d.screen_group(np.array([9.0, 0, 0, 0]), v, 2)
    assert hit == pytest.approx(1 / 3)
    assert ratio == pytest.approx((2 + 3 + 4) / 3 / 4)


def test_screening_hit_rate_of_random_and_constant_scores_is_k_over_n():
    rng = np.random.default_rng(2)
    v = np.exp(rng.normal(size=16 * 40))
    pid = np.repeat(np.arange(40), 16)
    groups = [np.flatnonzero(pid == p) for p in range(40)]
    const_hit, _ = d.screen_parts(np.zeros(len(v)), v, pid, 40, groups, 4)
    assert const_hit.value() == pytest.approx(4 / 16)
    hits = [d.screen_parts(rng.normal(size=len(v)), v, pid, 40, groups, 4)[0].value()
            for _ in range(100)]
    assert np.mean(hits) == pytest.approx(0.25, abs=0.02)


def test_random_and_sibling_groups():
    pid = np.array([0] * 20 + [1] * 10)
    rnd = d.random_groups(pid, 2, size=16, draws=5, seed=3)
    assert len(rnd) == 5 and all(len(g) == 16 and len(set(g)) == 16 and max(g) < 20 for g in rnd)
    again = d.random_groups(pid, 2, size=16, draws=5, seed=3)
    assert all((a == b).all() for a, b in zip(rnd, again))
    parents = ["x"] * 6 + ["y"] * 3 + [None] * 11 + ["x"] * 10
    sets = d.sibling_groups(pid, parents, 4)
    # problem 0 parent x (6 rows) and problem 1 parent x (10 rows); y has only 3
    assert sorted(len(g) for g in sets) == [6, 10]


# ----------------------------------------------------------------------------- probabilities
def test_skill_by_hand_and_climatology_against_itself():
    y = np.array([0, 1])
    sharp = np.array([[1.0, 0, 0, 0, 0, 0, 0, 0], [0, 1.0, 0, 0, 0, 0, 0, 0]])
    clim = np.tile([0.5, 0.5, 0, 0, 0, 0, 0, 0], (2, 1))
    pid = np.array([0, 0])
    # Brier of the climatology: 0.5 * (0.25 + 0.25) = 0.25 per row; perfect forecast: 0
    st = d.skill_parts(metrics.brier_rows(sharp, y), metrics.brier_rows(clim, y), pid, 1)
    assert st.value() == pytest.approx(1.0)
    st = d.skill_parts(metrics.brier_rows(clim, y), metrics.brier_rows(clim, y), pid, 1)
    assert st.value() == pytest.approx(0.0)
    wrong = sharp[::-1]
    st = d.skill_parts(metrics.brier_rows(wrong, y), metrics.brier_rows(clim, y), pid, 1)
    assert st.value() == pytest.approx(1 - 1.0 / 0.25)


def _truth(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.choice(8, size=n, p=[0.05, 0.1, 0.15, 0.3, 0.2, 0.1, 0.07, 0.03])
    pid = np.repeat(np.arange(n // 50), 50)
    return y, pid


def test_random_scores_and_uniform_probabilities_get_no_skill():
    y, pid = _truth(2000, 4)
    P = pid.max() + 1
    clim = np.tile(np.bincount(y, minlength=8) / len(y), (len(y), 1))
    uniform = np.full((len(y), 8), 1 / 8)
    for loss in (metrics.brier_rows, metrics.crps_rows):
        assert d.skill_parts(loss(clim, y), loss(clim, y), pid, P).value() == pytest.approx(0.0)
        assert d.skill_parts(loss(uniform, y), loss(clim, y), pid, P).value() < 0.0
    # random probability vectors are worse than the climatology too
    rng = np.random.default_rng(5)
    noise = rng.dirichlet(np.ones(8), size=len(y))
    assert d.skill_parts(metrics.brier_rows(noise, y), metrics.brier_rows(clim, y), pid, P).value() < 0


def test_ece_and_sharpness_parts_match_the_pooled_metrics():
    y, pid = _truth(500, 6)
    rng = np.random.default_rng(7)
    p = rng.dirichlet(np.ones(8) * 0.5, size=len(y))
    P = pid.max() + 1
    assert d.ece_parts(p, y, pid, P).value() == pytest.approx(metrics.ece(p, y))
    assert d.mean_parts(p.max(axis=1), pid, P).value() == pytest.approx(metrics.sharpness(p))
    # the climatology is calibrated in its one bucket: ECE of a constant forecast of the true
    # frequencies is |freq(argmax) - max prob| = 0
    clim = np.tile(np.bincount(y, minlength=8) / len(y), (len(y), 1))
    assert metrics.ece(clim, y) == pytest.approx(0.0, abs=1e-12)
    assert metrics.sharpness(clim) == pytest.approx(clim[0].max())
    assert metrics.sharpness(np.full((3, 8), 1 / 8)) == pytest.approx(1 / 8)


def test_spearman_within_by_hand():
    v = np.array([1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0])
    s = np.array([1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 5.0, 5.0])
    pid = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    st = d.spearman_within(s, v, pid, 3)
    assert st.parts[0] == pytest.approx(1.0) and st.parts[1] == pytest.approx(-1.0)
    assert math.isnan(st.parts[2])  # constant score
    assert st.value() == pytest.approx(0.0)  # median of (1, -1)


# ----------------------------------------------------------------------------- bootstrap + report
def test_bootstrap_ci_brackets_the_value_and_is_seeded():
    rng = np.random.default_rng(8)
    v = np.exp(rng.normal(size=600))
    g = np.repeat(np.arange(20), 30)
    s = np.log(v) + rng.normal(scale=1.0, size=600)
    y = metrics.bins_of_log2(np.log2(v))
    probs = np.full((600, 8), 1 / 8)
    rep = d.report(probs, y, s, v, g, n_boot=300, seed=1)
    out = rep.to_dict()
    lo, hi = out["pair_acc_125_ci"]
    assert lo <= out["pair_acc_125"] <= hi and hi - lo > 0
    assert out["pair_acc_125"] > 0.6
    assert d.report(probs, y, s, v, g, n_boot=300, seed=1).to_dict() == out
    assert out["n_random16_groups"] == 20 * 100 and "sibling_hit_top4" not in out


def test_report_of_random_scores_is_near_chance_and_compare_is_paired():
    rng = np.random.default_rng(9)
    n = 16 * 30
    v = np.exp(rng.normal(size=n))
    g = np.repeat(np.arange(30), 16)
    y = metrics.bins_of_log2(np.log2(v))
    probs = np.full((n, 8), 1 / 8)
    parents = [f"p{i // 8}" for i in range(n)]  # sibling sets of 8
    good = d.report(probs, y, np.log(v), v, g, parents=parents, n_boot=200, seed=0)
    rand = d.report(probs, y, rng.normal(size=n), v, g, parents=parents, n_boot=200, seed=0)
    assert good.values()["sibling_hit_top4"] == 1.0
    assert abs(rand.values()["pair_acc_125"] - 0.5) < 0.05
    assert abs(rand.values()["spearman_within_median"]) < 0.15
    diff = d.compare(good, rand)
    assert diff["pair_acc_125"]["ci"][0] > 0.3
    assert diff["sharpness"]["diff"] == 0.0
    with pytest.raises(MetricInputError):
        d.compare(good, d.report(probs, y, np.log(v), v, g, n_boot=200, seed=1))


def test_bad_inputs_are_typed_errors():
    with pytest.raises(MetricInputError):
        d.pair_accuracy([0, 1], [1.0, -1.0], ["a", "a"])
    with pytest.raises(MetricInputError):
        d.pair_accuracy([0, 1], [1.0, 2.0], ["a", "a"], ratio=0.5)
    with pytest.raises(MetricInputError):
        d.pair_accuracy([0, float("nan")], [1.0, 2.0], ["a", "a"])
