"""The control forecasters: random (seeded order, uniform probabilities) and climatology."""
from __future__ import annotations

import numpy as np
import pytest

from workbench import bins
from workbench.errors import ConfigError, NotFittedError
from workbench.evaluate.synthetic import SYNTHETIC_HARDWARE, make_synthetic
from workbench.forecast.controls import (TILT, ClimatologyForecaster, RandomForecaster,
                                         make_control)
from workbench.records import Measurement, Status


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_problems=4, per_problem=12, gpus=("h100",), seed=3)


def _items(data):
    P = {p.id: p for p in data.problems}
    return [(P[c.problem_id], c) for c in data.candidates]


def test_random_is_uniform_to_the_tilt_and_seeded_independently_of_order(data):
    items = _items(data)
    hw = SYNTHETIC_HARDWARE["h100"]
    a = RandomForecaster(seed=0).forecast_batch(items, hw)
    b = RandomForecaster(seed=0).forecast_batch(items[::-1], hw)[::-1]
    c = RandomForecaster(seed=1).forecast_batch(items, hw)
    for f in a:
        assert np.allclose(f.probabilities, 1 / 8, atol=TILT) and sum(f.probabilities) == pytest.approx(1)
    ea = [f.expected_log2_speedup for f in a]
    assert ea == [f.expected_log2_speedup for f in b]
    assert ea != [f.expected_log2_speedup for f in c]
    assert len(set(ea)) == len(ea)  # a strict random order, no ties


def test_climatology_gives_the_training_bin_frequencies(data):
    ok = [m for m in data.measurements if m.ok]
    fc = ClimatologyForecaster().fit(data.problems, data.candidates, data.measurements)
    freq = np.bincount([m.bin for m in ok], minlength=8) / len(ok)
    hw = SYNTHETIC_HARDWARE["h100"]
    fs = fc.forecast_batch(_items(data)[:3], hw)
    assert all(np.allclose(f.probabilities, freq) for f in fs)
    study = ClimatologyForecaster(bin_convention="study-code").fit(
        data.problems, data.candidates, data.measurements)
    freq2 = np.bincount([bins.bin_of_convention(m.speedup, "study-code") for m in ok],
                        minlength=8) / len(ok)
    assert np.allclose(study.frequencies_, freq2)


def test_climatology_errors(data):
    with pytest.raises(NotFittedError):
        ClimatologyForecaster().forecast_batch(_items(data)[:1], SYNTHETIC_HARDWARE["h100"])
    failed = [Measurement(candidate_id="c", problem_id="p", hardware_key="h100",
                          status=Status.COMPILE_ERROR)]
    with pytest.raises(ConfigError):
        ClimatologyForecaster().fit([], [], failed)
    with pytest.raises(ConfigError):
        ClimatologyForecaster(bin_convention="other")
    with pytest.raises(ConfigError):
        make_control("oracle")
