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
    # p-values were computed from the top down and the chosen threshold passed its test.
    j = int(np.nonzero(ctl.thresholds_ == ctl.threshold_)[0][0])
    assert ctl.p_values_[j] <= 0.1
    assert np.all(np.isnan(ctl.p_values_[:3]))  # covering < 22 forecasts: not testable


def test_decide_before_calibrate_raises():
    from workbench.records import Forecast
    f = Forecast(forecaster="t", candidate_id="a", problem_id="P", hardware_key="h100",
                 probabilities=(1,) * 8)
    with pytest.raises(NotFittedError):
        ConformalRiskController().decide(f)


@pytest.mark.parametrize("kw", [{"target_risk": 0}, {"delta": 1.0}, {"grid": 0}])
def test_bad_arguments(kw):
    with pytest.raises(ValueError):
        ConformalRiskController(**kw)
