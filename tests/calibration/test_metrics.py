"""Metrics pinned on small hand-computed cases."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from workbench.calibration import metrics
from workbench.calibration.errors import MetricInputError

# Three forecasts: right and fairly sure; off by one; confidently wrong by 7 bins.
P = np.array([
    [0.7, 0.1, 0.1, 0.1, 0, 0, 0, 0],
    [0, 0, 0.6, 0.4, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 0, 1.0],
])
Y = np.array([0, 3, 0])


def test_accuracy_and_off_by_one():
    assert metrics.accuracy(P, Y) == pytest.approx(1 / 3)
    assert metrics.off_by_one_accuracy(P, Y) == pytest.approx(2 / 3)


def test_brier_is_half_the_squared_error():
    rows = [(0.3 ** 2 + 3 * 0.1 ** 2) / 2, (0.6 ** 2 + 0.6 ** 2) / 2, (1 + 1) / 2]
    assert metrics.brier(P, Y) == pytest.approx(sum(rows) / 3)
    assert metrics.brier(np.eye(8), np.arange(8)) == 0.0


def test_crps_over_seven_inner_edges():
    rows = [(0.3 ** 2 + 0.2 ** 2 + 0.1 ** 2) / 7, 0.6 ** 2 / 7, 7 / 7]
    assert metrics.crps(P, Y) == pytest.approx(sum(rows) / 3)
    # Ordinal: predicting the neighbour bin costs less than predicting a far bin.
    near = metrics.crps(np.eye(8)[[4]], [3])
    far = metrics.crps(np.eye(8)[[7]], [3])
    assert near == pytest.approx(1 / 7) and far == pytest.approx(4 / 7)


def test_nll_clips_zero_probability():
    expected = (-math.log(0.7) - math.log(0.4) - math.log(1e-12)) / 3
    assert metrics.nll(P, Y) == pytest.approx(expected)


def test_ece_one_row_per_bucket():
    # Confidences .7 (right), .6 (wrong), 1.0 (wrong) land in buckets 7, 6 and 9.
    assert metrics.ece(P, Y) == pytest.approx((0.3 + 0.6 + 1.0) / 3)


def test_ece_shares_a_bucket():
    p = np.array([[0.72, 0.28] + [0] * 6, [0.78, 0.22] + [0] * 6])
    # Mean confidence .75, accuracy .5 in bucket 7.
    assert metrics.ece(p, [0, 1]) == pytest.approx(0.25)
    r = metrics.reliability(p, [0, 1])
    assert r.count[7] == 2 and r.count.sum() == 2
    assert r.confidence[7] == pytest.approx(0.75) and r.accuracy[7] == pytest.approx(0.5)
    assert np.isnan(r.accuracy[0])


def test_spearman_matches_scipy_with_ties():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, 40).astype(float)
    b = a + rng.normal(0, 2, 40)
    assert metrics.spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)
    assert metrics.spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)
    assert math.isnan(metrics.spearman([1, 1, 1], [1, 2, 3]))


def test_top_k_recovery_per_pool():
    scores = [3, 2, 1, 0] + list(range(11))
    speedups = [1, 4, 2, 0.5] + [1.0] * 9 + [3.0, 2.0]  # pool B: best (3.0) has score 9
    groups = ["a"] * 4 + ["b"] * 11
    rec = metrics.top_k_recovery(scores, speedups, groups, k=0.25)
    assert rec["a"] == pytest.approx(1 / 4)  # top 1 of 4 has speedup 1, best is 4
    assert metrics.top_k_recovery(scores, speedups, groups, k=0.5)["a"] == 1.0
    # Pool b: ceil(0.1 * 11) = 2 measured -> scores 10 and 9 -> speedups 2.0 and 3.0.
    assert metrics.top_k_recovery(scores, speedups, groups, k=0.10)["b"] == 1.0
    assert metrics.top_k_recovery(scores[4:], speedups[4:], groups[4:], k=0.05)["b"] == pytest.approx(2 / 3)
    assert metrics.top_k_recovery_median(scores, speedups, groups, k=0.25) == pytest.approx(
        np.median([0.25, rec["b"]]))


def test_summary_has_every_metric():
    sp = [0.2, 0.9, 0.2]
    out = metrics.summary(P, Y, measured_speedups=sp, groups=["x", "x", "y"])
    for key in ("accuracy", "off_by_one", "ece", "brier", "crps", "nll", "spearman",
                "top10_recovery_median"):
        assert key in out
    assert out["brier"] == pytest.approx(metrics.brier(P, Y))


def test_problem_offsets_on_a_hand_case():
    # problem a: every forecast 2 octaves low (4 bins off); problem b: errors -0.1, 0, +0.3
    point = np.array([-0.8, -0.8, -0.8, 0.0, 0.1, 0.2])
    measured = 2.0 ** np.array([1.2, 1.2, 1.2, -0.1, 0.1, 0.5])
    out = metrics.problem_offsets(point, measured, ["a", "a", "a", "b", "b", "b"])
    assert out["problem_offset_sd_log2"] == pytest.approx(1.0)  # offsets 2 and 0
    # left once removed: a 0, 0, 0; b -0.1, 0, +0.3 -> median |.| over six rows = 0.0
    assert out["within_problem_mad_log2"] == pytest.approx(0.0)
    assert out["oracle_offset_off_by_one"] == 1.0  # a lands in its own bin once moved by 2
    far = metrics.problem_offsets(point, measured, ["a", "a", "b", "b", "c", "c"])
    assert far["within_problem_mad_log2"] > 0.0 and far["problem_offset_sd_log2"] < 1.0
    with pytest.raises(MetricInputError):
        metrics.problem_offsets(point, measured[:3], ["a"] * 6)
    # the per-problem terms: medians 2.0 and 0.0, in order of first appearance
    by = metrics.offsets_by_problem(point, measured, ["b", "b", "b", "a", "a", "a"])
    assert list(by) == ["b", "a"] and by == {"b": pytest.approx(2.0), "a": pytest.approx(0.0)}
    with pytest.raises(MetricInputError):
        metrics.offsets_by_problem(point, measured, ["a"] * 5)


def test_summary_reports_problem_offsets_with_groups():
    sp = [0.2, 0.9, 0.2]
    out = metrics.summary(P, Y, measured_speedups=sp, groups=["x", "x", "y"])
    assert out["oracle_offset_off_by_one"] == pytest.approx(metrics.problem_offsets(
        metrics.expected_log2(P), sp, ["x", "x", "y"])["oracle_offset_off_by_one"])
    assert "problem_offset_sd_log2" not in metrics.summary(P, Y, measured_speedups=sp)


def test_rows_are_renormalised():
    assert metrics.brier(P * 3, Y) == pytest.approx(metrics.brier(P, Y))


@pytest.mark.parametrize("probs,y", [
    (np.ones((2, 7)), [0, 1]),
    (np.ones((2, 8)), [0]),
    (np.ones((2, 8)), [0, 8]),
    (-np.ones((1, 8)), [0]),
    (np.zeros((1, 8)), [0]),
    (np.ones((0, 8)), []),
])
def test_bad_inputs_raise_typed_error(probs, y):
    with pytest.raises(MetricInputError):
        metrics.brier(probs, y)
