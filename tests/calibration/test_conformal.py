"""The risk controller's guarantee, checked empirically over many synthetic draws."""
from __future__ import annotations

import numpy as np
import pytest

from workbench.calibration.conformal import (ConformalRiskController, binomial_p_value,
                                             clopper_pearson_upper)
from workbench.calibration.selective import coverage_and_risk, risk_coverage
from workbench.errors import NotFittedError


def _draw(rng, n):
    """A calibrated synthetic forecaster: confidence c ~ U(1/8, 1), error with probability 1 - c.

    Its true selective risk at threshold t is (1 - t) / 2."""
    c = rng.uniform(1 / 8, 1, n)
    err = (rng.random(n) > c).astype(float)
    return c, err


def test_p_value_and_bound():
    assert binomial_p_value(0, 0, 0.1) == 1.0
    assert binomial_p_value(0, 30, 0.1) == pytest.approx(0.9 ** 30)
    assert clopper_pearson_upper(0, 30, 0.1) == pytest.approx(1 - 0.1 ** (1 / 30))


@pytest.mark.parametrize("alpha,delta", [(0.1, 0.1), (0.2, 0.05)])
def test_guarantee_holds_on_fresh_data(alpha, delta):
    rng = np.random.default_rng(7)
    draws, violations, naive_violations, coverages = 300, 0, 0, []
    for _ in range(draws):
        c, e = _draw(rng, 1000)
        ctl = ConformalRiskController(target_risk=alpha, delta=delta).calibrate_arrays(c, e)
        tc, te = _draw(rng, 20000)
        cov, risk = coverage_and_risk(tc, te, ctl.threshold_)
        coverages.append(cov)
        violations += risk > alpha
        # The naive rule (lowest threshold with empirical risk <= alpha) for contrast.
        rc = risk_coverage(c, e)
        ok = np.nonzero(rc.risk <= alpha)[0]
        naive_t = rc.thresholds[ok[-1]] if len(ok) else np.inf
        naive_violations += coverage_and_risk(tc, te, naive_t)[1] > alpha
    assert violations / draws <= delta + 0.04
    assert naive_violations / draws > violations / draws + 0.1  # the correction matters
    # Not trivially deferring everything: the largest safe coverage is 2 * alpha / (7/8)
    # (true risk (1 - t) / 2 = alpha at t = 1 - 2 alpha); a certified one is smaller.
    assert np.mean(coverages) > 0.25 * (2 * alpha) / (7 / 8)


def _draw_confidently_wrong_top(rng, n):
    """Confidence c ~ U(1/8, 1); wrong with probability 1 above 0.95 (a confidently wrong
    cluster, ~6% of forecasts) and 0.3 below. Its selective risk is not monotone in the
    threshold: 1 at the top, about 0.34 when everything is trusted."""
    c = rng.uniform(1 / 8, 1, n)
    err = np.where(c > 0.95, 1.0, (rng.random(n) < 0.3).astype(float))
    return c, err


def test_a_confidently_wrong_top_does_not_block_lower_thresholds():
    """Regression: the single top-down scan stopped at the confidently wrong top forecasts and
    certified nothing, even at a target far above the error of trusting everything."""
    rng = np.random.default_rng(0)
    c, e = _draw_confidently_wrong_top(rng, 1000)
    assert e.mean() < 0.4  # trusting everything is well within the target below
    single = ConformalRiskController(target_risk=0.5, delta=0.1, starts=1).calibrate_arrays(c, e)
    assert single.threshold_ == float("inf") and single.coverage_ == 0.0  # the old behaviour
    ctl = ConformalRiskController(target_risk=0.5, delta=0.1).calibrate_arrays(c, e)
    assert np.isfinite(ctl.threshold_) and ctl.threshold_ < 0.95
    assert ctl.coverage_ > 0.9 and ctl.risk_ <= 0.5 and ctl.upper_bound_ <= 0.5
    # Every certified threshold passed its scan's test at the split level.
    assert len(ctl.starts_) > 1 and sum(ctl.levels_) == pytest.approx(0.1)
    # Each certified threshold was reached by one scan passing every test from its start.
    for j in np.nonzero(ctl.certified_)[0]:
        assert any(s <= j and np.all(ctl.p_values_[s:j + 1] <= lv)
                   for s, lv in zip(ctl.starts_, ctl.levels_))


def test_starts_none_takes_the_class_default(monkeypatch):
    """`default_starts` (what benchmarks/replay_repro.py --conformal-starts sets) is the number of
    scans a controller built without `starts` runs."""
    c, e = _draw_confidently_wrong_top(np.random.default_rng(0), 1000)
    assert ConformalRiskController().starts == ConformalRiskController.default_starts == 8
    monkeypatch.setattr(ConformalRiskController, "default_starts", 1)
    ctl = ConformalRiskController(target_risk=0.5, delta=0.1).calibrate_arrays(c, e)
    assert ctl.starts == 1 and ctl.threshold_ == float("inf")  # the single scan's answer above
    assert ConformalRiskController(starts=3).starts == 3


def test_hand_built_case_where_trusting_everything_is_within_the_target():
    """The lesson notebook's shape: the most confident forecasts all wrong, the overall error
    below the target. The controller must trust a non-empty set."""
    conf = np.concatenate([np.full(12, 0.94), np.linspace(0.9, 0.26, 400)])
    err = np.concatenate([np.ones(12), (np.arange(400) % 2 == 0).astype(float)])  # 50% wrong below
    assert err.mean() < 0.7
    ctl = ConformalRiskController(target_risk=0.7, delta=0.1).calibrate_arrays(conf, err)
    assert ctl.coverage_ > 0 and ctl.threshold_ <= 0.9 and ctl.risk_ < 0.7


@pytest.mark.parametrize("alpha,delta", [(0.4, 0.1), (0.5, 0.2)])
def test_guarantee_holds_when_risk_is_not_monotone(alpha, delta):
    rng = np.random.default_rng(11)
    draws, violations, certified = 300, 0, 0
    for _ in range(draws):
        c, e = _draw_confidently_wrong_top(rng, 800)
        ctl = ConformalRiskController(target_risk=alpha, delta=delta).calibrate_arrays(c, e)
        certified += np.isfinite(ctl.threshold_)
        tc, te = _draw_confidently_wrong_top(rng, 20000)
        violations += coverage_and_risk(tc, te, ctl.threshold_)[1] > alpha
    assert violations / draws <= delta + 0.04
    assert certified / draws > 0.7  # not the trivial "defer everything" (one scan: never)


def test_nothing_certified_defers_everything():
    c = np.full(20, 0.9)
    e = np.ones(20)
    ctl = ConformalRiskController(target_risk=0.1, delta=0.1).calibrate_arrays(c, e)
    assert ctl.threshold_ == float("inf")
    assert ctl.coverage_ == 0.0


def test_attributes_and_not_fitted():
    ctl = ConformalRiskController(target_risk=0.2, delta=0.1)
    assert not hasattr(ctl, "threshold_")
    rng = np.random.default_rng(1)
    c, e = _draw(rng, 500)
    assert ctl.calibrate_arrays(c, e) is ctl
    assert ctl.risk_ <= 0.2 and 0 < ctl.coverage_ <= 1
    assert ctl.upper_bound_ >= ctl.risk_
    # The chosen threshold passed its scan's test at a share of delta.
    j = int(np.nonzero(ctl.thresholds_ == ctl.threshold_)[0][0])
    assert ctl.certified_[j] and ctl.p_values_[j] <= max(ctl.levels_) <= 0.1
    assert j == int(np.nonzero(ctl.certified_)[0][-1])  # the lowest certified threshold
    assert np.all(np.isnan(ctl.p_values_[:3]))  # covering too few forecasts: not testable


def test_decide_before_calibrate_raises():
    from workbench.records import Forecast
    f = Forecast(forecaster="t", candidate_id="a", problem_id="P", hardware_key="h100",
                 probabilities=(1,) * 8)
    with pytest.raises(NotFittedError):
        ConformalRiskController().decide(f)


@pytest.mark.parametrize("kw", [{"target_risk": 0}, {"delta": 1.0}, {"grid": 0}, {"starts": 0}])
def test_bad_arguments(kw):
    with pytest.raises(ValueError):
        ConformalRiskController(**kw)
