"""The learned forecaster's parts used on their own, in the fit -> calibrate -> predict order."""
from __future__ import annotations

import numpy as np
import pytest

from workbench import bins
from workbench.errors import ConfigError, NotFittedError
from workbench.forecast.features import FEATURE_NAMES
from workbench.forecast.learned import (OFFSET_GRID, LearnedForecaster, MedianRegressor,
                                        ResidualDistribution, VariantChoice, select_variant)

IDEAL = FEATURE_NAMES.index("log2_ideal_speedup")
REF = FEATURE_NAMES.index("ref_log10_us")


def _rows(seed: int = 0, problems: int = 12, per: int = 30):
    """(X, speedups, groups, reference_ms): log2-speedup follows the ideal plus a problem offset."""
    rng = np.random.default_rng(seed)
    n = problems * per
    X = rng.normal(size=(n, len(FEATURE_NAMES)))
    X[:, IDEAL] = rng.uniform(-2, 3, n)
    X[:, REF] = rng.uniform(0.5, 3, n)
    offset = np.repeat(rng.normal(scale=0.4, size=problems), per)
    speedups = 2.0 ** (0.8 * X[:, IDEAL] + 0.5 * X[:, 0] + offset + rng.normal(0, 0.3, n))
    groups = np.repeat([f"p{i:02d}" for i in range(problems)], per)
    reference_ms = np.repeat(rng.uniform(0.01, 1.0, problems), per)
    return X, speedups, groups, reference_ms


def test_the_parts_fitted_by_hand_give_the_forecasters_probabilities():
    """select_variant, then MedianRegressor.fit, then ResidualDistribution.calibrate: the same
    numbers as LearnedForecaster.fit_matrix with the same settings."""
    X, speedups, groups, reference_ms = _rows()
    fc = LearnedForecaster(max_iter=20, calibration_folds=4).fit_matrix(
        X, speedups, groups, reference_ms=reference_ms)
    log2s = np.log2(speedups)
    y = np.asarray([bins.bin_of(s) for s in speedups])

    def new_median(share):
        return MedianRegressor(share, max_iter=20)

    choice = select_variant(X, log2s, groups, reference_ms, folds=4, new_median=new_median)
    assert isinstance(fc.variant_, VariantChoice)
    assert (choice.ideal_offset, choice.reference_use) == (fc.ideal_offset_, fc.reference_use_)
    assert choice.offset_errors == fc.offset_errors_ and choice.use_errors == fc.use_errors_
    from workbench.forecast.learned import measured_reference_matrix

    Xu = measured_reference_matrix(X, reference_ms, choice.reference_use)
    median = new_median(choice.ideal_offset).fit(Xu, log2s)
    dist = ResidualDistribution().calibrate(choice.oof_medians, log2s, y, choice.splits)
    np.testing.assert_array_equal(dist.predict_proba(median.predict(Xu[:50])), fc.predict_proba(Xu[:50]))
    np.testing.assert_array_equal(dist.calibration_set()[0], fc.calibration_set()[0])


def test_select_variant_returns_what_it_chose_and_why():
    X, speedups, groups, reference_ms = _rows(seed=1)
    log2s = np.log2(speedups)
    choice = select_variant(X, log2s, groups, reference_ms, folds=3,
                            new_median=lambda s: MedianRegressor(s, max_iter=15))
    assert sorted(choice.offset_errors) == sorted(OFFSET_GRID)
    assert choice.ideal_offset == min(choice.offset_errors, key=choice.offset_errors.get)
    assert sorted(choice.use_errors) == ["everywhere", "feature"]
    assert choice.reference_use == min(choice.use_errors, key=choice.use_errors.get)
    assert choice.use_errors[choice.reference_use] == min(choice.offset_errors.values())
    assert choice.folds == 3 and len(choice.splits) == 3 and choice.oof_medians.shape == log2s.shape
    # each row's out-of-fold median comes from a model that never saw its problem
    for tr, te in choice.splits:
        assert not set(groups[tr]) & set(groups[te])
    assert "out-of-fold" in choice.reason() and f"{choice.ideal_offset:g}" in choice.reason()
    # no measured times: the matrix is used as given, no use compared
    plain = select_variant(X, log2s, groups, None, offsets=(0.5,), folds=3,
                           new_median=lambda s: MedianRegressor(s, max_iter=15))
    assert plain.reference_use is None and plain.use_errors == {} and list(plain.offset_errors) == [0.5]


def test_select_variant_with_one_problem_compares_nothing():
    X, speedups, groups, _ = _rows(problems=1)
    choice = select_variant(X, np.log2(speedups), groups)
    assert choice.folds == 1 and choice.offset_errors == {} and choice.oof_medians is None
    assert choice.ideal_offset == 0.5 and "nothing was compared" in choice.reason()
    assert select_variant(X, np.log2(speedups), groups, offsets=(0.25,)).ideal_offset == 0.25


def test_median_regressor_adds_its_share_of_the_ideal_back():
    X, speedups, _, _ = _rows(seed=2)
    log2s = np.log2(speedups)
    m = MedianRegressor(1.0, max_iter=20).fit(X, log2s)
    moved = X.copy()
    moved[:, IDEAL] += 10.0  # far outside the training range: the trees are flat there
    far = m.predict(moved[:5]) - m.predict(X[:5])
    assert np.all(far > 5.0)
    with pytest.raises(ConfigError):
        MedianRegressor(-0.1)
    with pytest.raises(NotFittedError):
        MedianRegressor(0.5).predict(X)


def test_residual_distribution_by_hand():
    splits = [(np.array([2, 3]), np.array([0, 1])), (np.array([0, 1]), np.array([2, 3]))]
    oof = np.array([0.25, 0.25, 1.5, 1.5])
    log2s = np.array([0.25, 0.75, 1.5, 1.0])
    y = np.asarray([bins.bin_of(2.0 ** v) for v in log2s])
    d = ResidualDistribution().calibrate(oof, log2s, y, splits)
    np.testing.assert_array_equal(d.residuals_, log2s - oof)
    probs, bins_ = d.calibration_set()
    assert probs.shape == (4, bins.N_BINS) and bins_.tolist() == y.tolist()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-6)
    assert 0.2 <= d.temperature_ <= 5.0
    assert ResidualDistribution().fit_in_sample(np.zeros(3)).calibration_set() is None
    with pytest.raises(ConfigError):
        ResidualDistribution("accuracy")
    with pytest.raises(NotFittedError):
        ResidualDistribution().predict_proba(np.zeros(2))


def test_every_module_of_the_learned_forecaster_decides_the_fit_cache_key():
    """An edit of any part refits cached forecasters instead of loading a stale one."""
    from pathlib import Path

    from workbench.forecast import fitted

    package = Path(fitted.__file__).resolve().parents[1]
    parts = {str(p.relative_to(package)) for p in (package / "forecast" / "learned").glob("*.py")}
    assert parts and parts <= set(fitted._CODE_FILES)
    assert all((package / rel).exists() for rel in fitted._CODE_FILES)
