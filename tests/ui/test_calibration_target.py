"""The calibration view's target risk: a conformal controller calibrated on half the problems,
its share trusted and GPU measurements saved on the held-out half."""
from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.ui.calibration_view import (CalibrationInfo, CalibrationView, target_risk_summary,
                                           target_risk_text)


def _info(n_problems: int = 20, per_problem: int = 60, seed: int = 0) -> CalibrationInfo:
    """Forecasts whose confidence is their chance of the right bin (calibrated), 20 problems."""
    rng = np.random.default_rng(seed)
    n = n_problems * per_problem
    conf = rng.uniform(0.2, 1.0, n)
    right = rng.random(n) < conf
    true_bin = rng.integers(0, 8, n)
    pred = np.where(right, true_bin, (true_bin + 1) % 8)
    return CalibrationInfo(candidate_ids=np.array([f"c{i}" for i in range(n)], dtype=object),
                           expected_log2=np.zeros(n), measured_log2=np.zeros(n), confidence=conf,
                           predicted_bin=pred, true_bin=true_bin, abstained=np.zeros(n, dtype=bool),
                           problem_ids=np.array([f"P{i % n_problems}" for i in range(n)], dtype=object))


def test_target_risk_counts_trusted_on_the_held_out_half():
    info = _info()
    t = target_risk_summary(info, 0.3)
    assert t.calibration_n + t.test_n == info.n and t.calibration_n == t.test_n  # 10 problems each
    assert math.isfinite(t.threshold) and 0 < t.trusted < t.test_n
    # The same count by hand: the held-out half's forecasts at or above the threshold.
    problems = sorted(set(info.problem_ids.tolist()))
    np.random.default_rng(0).shuffle(problems)
    held_out = ~np.isin(info.problem_ids, problems[:10])
    assert t.trusted == int((held_out & (info.confidence >= t.threshold)).sum())
    assert t.test_risk <= 0.3 + 0.05 and t.share_trusted == pytest.approx(t.trusted / t.test_n)
    looser = target_risk_summary(info, 0.5)
    assert looser.trusted > t.trusted  # a looser target trusts more
    assert f"{t.trusted} of {t.test_n}" in target_risk_text(t)


def test_nothing_certified_and_too_few_problems_are_said():
    info = _info()
    strict = target_risk_summary(info, 0.01)  # no threshold can keep a 1% error here
    assert strict.threshold == float("inf") and strict.trusted == 0
    assert "no threshold certified" in target_risk_text(strict)
    one = _info(n_problems=1)
    assert target_risk_summary(one, 0.3) is None
    assert "at least two problems" in target_risk_text(None)


def test_view_target_slider_and_button():
    view = CalibrationView(_info())
    view.target_risk = 0.4
    assert view.target is not None and view.target.target_risk == 0.4
    assert "share trusted" in view.target_stats.object
    view.use_target_btn.clicks += 1  # "Set the threshold to the certified one"
    assert view.threshold == pytest.approx(view.target.threshold)
    assert view.summary.threshold == pytest.approx(view.target.threshold)
