"""Confidence scores, risk-coverage curves, AURC and the threshold policy."""
from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.calibration import selective
from workbench.calibration.selective import ThresholdPolicy
from workbench.errors import NotFittedError
from workbench.records import Forecast, Measurement


def test_confidence_scores_on_extremes():
    uniform = np.full((1, 8), 1 / 8)
    onehot = np.eye(8)[[2]]
    half = np.array([[0.5, 0.5, 0, 0, 0, 0, 0, 0]])
    assert selective.confidence(uniform, "maxprob")[0] == pytest.approx(1 / 8)
    assert selective.confidence(uniform, "entropy")[0] == pytest.approx(0.0)
    assert selective.confidence(uniform, "margin")[0] == pytest.approx(0.0)
    for s in selective.SCORES:
        assert selective.confidence(onehot, s)[0] == pytest.approx(1.0)
    # H = log 2, normalised by log 8.
    assert selective.confidence(half, "entropy")[0] == pytest.approx(1 - math.log(2) / math.log(8))
    assert selective.confidence([[0.6, 0.3, 0.1, 0, 0, 0, 0, 0]], "margin")[0] == pytest.approx(0.3)


def test_risk_coverage_with_ties_by_hand():
    rc = selective.risk_coverage([0.9, 0.8, 0.8, 0.3], [0, 1, 0, 1])
    np.testing.assert_allclose(rc.thresholds, [0.9, 0.8, 0.3])
    np.testing.assert_allclose(rc.coverage, [0.25, 0.75, 1.0])
    np.testing.assert_allclose(rc.risk, [0.0, 1 / 3, 0.5])
    assert rc.aurc == pytest.approx(0 * 0.25 + (1 / 3) * 0.5 + 0.5 * 0.25)
    assert rc.risk_at(0.5) == pytest.approx(1 / 3)
    assert rc.risk_at(1.0) == pytest.approx(0.5)


def test_aurc_without_ties_is_mean_of_topk_risks():
    rng = np.random.default_rng(0)
    conf = rng.random(50)
    err = (rng.random(50) < 0.4).astype(float)
    order = np.argsort(-conf)
    by_k = [err[order[:k]].mean() for k in range(1, 51)]
    assert selective.risk_coverage(conf, err).aurc == pytest.approx(np.mean(by_k))


def test_abstentions_are_never_covered():
    rc = selective.risk_coverage([0.9, float("-inf")], [0, 0])
    assert rc.coverage[-1] == pytest.approx(0.5)


def test_off_by_more_than_one_loss_and_callable():
    p = np.eye(8)[[3, 3, 3]]
    y = [3, 4, 6]
    np.testing.assert_array_equal(selective.losses(p, y), [0, 1, 1])
    np.testing.assert_array_equal(selective.losses(p, y, "off_by_more_than_one"), [0, 0, 1])
    np.testing.assert_array_equal(selective.losses(p, y, lambda a, b: a > b), [0, 0, 0])


def test_selective_risk_at_coverage_informative_confidence():
    # Confident forecasts right, unsure ones wrong: low risk at low coverage.
    p = np.array([[0.9] + [0.1 / 7] * 7, [0.8] + [0.2 / 7] * 7, [0.3] + [0.1] * 7, [0.2] + [0.8 / 7] * 7])
    y = [0, 0, 5, 5]
    assert selective.selective_risk_at_coverage(p, y, 0.5) == 0.0
    assert selective.selective_risk_at_coverage(p, y, 1.0) == pytest.approx(0.5)
    assert selective.aurc(p, y) == pytest.approx((0 + 0 + 1 / 3 + 1 / 2) / 4)


# --------------------------------------------------------------------------- policy
def _fc(cid: str, probs, abstain: bool = False) -> Forecast:
    if abstain:
        return Forecast.abstention("t", cid, "P", "h100", "no answer")
    return Forecast(forecaster="t", candidate_id=cid, problem_id="P", hardware_key="h100",
                    probabilities=tuple(probs))


def _ms(cid: str, speedup: float | None) -> Measurement:
    status = "ok" if speedup else "incorrect"
    return Measurement(candidate_id=cid, problem_id="P", hardware_key="h100", status=status,
                       speedup=speedup)


def _data():
    sure_right = [0.05] * 4 + [0.65] + [0.05] * 3      # bin 4 (1.0-1.41x)
    sure_wrong = [0.05] * 4 + [0.65] + [0.05] * 3
    unsure = [0.125] * 8
    fs = [_fc("a", sure_right), _fc("b", sure_wrong), _fc("c", unsure), _fc("d", unsure, True),
          _fc("e", sure_right)]
    ms = [_ms("a", 1.2), _ms("b", 3.0), _ms("c", 1.2), _ms("d", 1.2), _ms("e", None)]
    return fs, ms


def test_policy_lifecycle():
    fs, ms = _data()
    policy = ThresholdPolicy(score="maxprob", threshold=0.5)
    with pytest.raises(NotFittedError):
        policy.decide(fs[0])
    assert policy.calibrate(fs, ms) is policy
    # e is unmeasured (failed), so 4 labelled forecasts: a, b covered; c, d not.
    assert policy.n_calibration_ == 4
    assert policy.coverage_ == pytest.approx(0.5)
    assert policy.risk_ == pytest.approx(0.5)
    assert policy.decide(fs[0]) == "trust"
    assert policy.decide(fs[2]) == "defer"
    assert policy.decide(fs[3]) == "defer"  # abstention


def test_abstention_defers_even_at_zero_threshold():
    fs, ms = _data()
    policy = ThresholdPolicy(threshold=0.0).calibrate(fs, ms)
    assert policy.decide(fs[3]) == "defer"
    assert policy.decide(fs[2]) == "trust"
    assert policy.coverage_ == pytest.approx(3 / 4)


def test_policy_by_target_coverage():
    fs, ms = _data()
    policy = ThresholdPolicy(coverage=0.5).calibrate(fs, ms)
    assert policy.threshold_ == pytest.approx(0.65)
    assert policy.coverage_risk(fs, ms) == (pytest.approx(0.5), pytest.approx(0.5))


def test_policy_argument_errors():
    with pytest.raises(ValueError):
        ThresholdPolicy()
    with pytest.raises(ValueError):
        ThresholdPolicy(threshold=0.5, score="nope")


def test_calibrate_with_held_out_arrays_and_own_forecasts():
    from workbench.calibration.conformal import ConformalRiskController
    from workbench.calibration.errors import MetricInputError

    fs, ms = _data()
    # held-out rows: two sure (0.65) forecasts of bin 4, one right and one wrong, one unsure
    probs = np.array([fs[0].probabilities, fs[1].probabilities, fs[2].probabilities])
    y = np.array([4, 6, 4])
    # the same rows as arrays or as forecasts with measurements give the same policy
    from_arrays = ThresholdPolicy(coverage=0.5).calibrate_with((probs, y))
    from_records = ThresholdPolicy(coverage=0.5).calibrate(fs[:3], ms[:3])
    assert (from_arrays.threshold_, from_arrays.coverage_, from_arrays.risk_) == \
        (from_records.threshold_, from_records.coverage_, from_records.risk_)
    # both parts pooled: 3 held-out rows + 4 labelled forecasts (e failed, not counted)
    both = ThresholdPolicy(threshold=0.5).calibrate_with((probs, y), fs, ms)
    assert both.n_calibration_ == 7 and both.coverage_ == pytest.approx(4 / 7)
    assert both.risk_ == pytest.approx(2 / 4)  # a and held-out row 0 right; b and held-out row 1 wrong
    assert ThresholdPolicy(threshold=0.5).calibrate_with(None, fs, ms).n_calibration_ == 4
    # 40 sure-and-right and 40 unsure-and-wrong held-out rows: the conformal controller
    # certifies the sure forecasts only
    rows = np.vstack([np.tile(probs[:1], (40, 1)), np.tile(probs[2:], (40, 1))])
    crc = ConformalRiskController(target_risk=0.2, delta=0.1).calibrate_with(
        (rows, np.r_[np.full(40, 4), np.full(40, 5)]))
    assert crc.coverage_ == pytest.approx(0.5) and crc.risk_ == 0.0
    assert crc.decide(fs[0]) == "trust" and crc.decide(fs[2]) == "defer"
    with pytest.raises(MetricInputError, match="nothing to calibrate"):
        ThresholdPolicy(threshold=0.5).calibrate_with(None)
    with pytest.raises(MetricInputError):
        ThresholdPolicy(threshold=0.5).calibrate_arrays([0.5, 0.6], [1.0])


def test_aurc_by_step_and_trapezoid_rule_by_hand():
    from workbench.calibration.selective import risk_coverage

    # confidences 0.9, 0.8, 0.7, 0.6 with losses 0, 1, 0, 1: points (0.25, 0), (0.5, 0.5),
    # (0.75, 1/3), (1.0, 0.5)
    rc = risk_coverage([0.9, 0.8, 0.7, 0.6], [0, 1, 0, 1])
    assert rc.aurc == pytest.approx(0.25 * (0 + 0.5 + 1 / 3 + 0.5))
    assert rc.aurc_trapezoid == pytest.approx(0.25 * ((0 + 0.5) / 2 + (0.5 + 1 / 3) / 2
                                                      + (1 / 3 + 0.5) / 2))


def test_regret_curve_by_hand():
    from workbench.calibration.selective import regret_curve

    # one problem, speedups 1, 2, 4; confidences 0.9 (speedup 1), 0.5 (4), 0.1 (2);
    # scores rank speedup 1 highest. Trust only the first: measured = {1 (top trusted), 4, 2}
    # -> regret 0. Trust two: top trusted is speedup 1 (higher score), deferred {2} -> found 2,
    # regret log2(4/2) = 1. Trust all: found 1 -> regret 2.
    rc = regret_curve([0.9, 0.5, 0.1], [3.0, 1.0, 2.0], [1.0, 4.0, 2.0], ["p", "p", "p"])
    assert rc.coverage.tolist() == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert rc.risk.tolist() == pytest.approx([0.0, 1.0, 2.0])
    # two problems whose scores favour the slower kernel: the risk is the mean over both; a
    # problem keeps regret 0 while its faster kernel is still deferred (measured)
    rc2 = regret_curve([0.9, 0.1, 0.8, 0.7], [1.0, 0.0, 1.0, 0.0], [1.0, 2.0, 1.0, 2.0],
                       ["a", "a", "b", "b"])
    assert rc2.risk.tolist() == pytest.approx([0.0, 0.0, 0.5, 1.0])
