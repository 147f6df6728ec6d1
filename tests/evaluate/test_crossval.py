"""Problem-level cross-validation on SYNTHETIC records (no real GPU data yet)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from workbench.errors import ConfigError
from workbench.evaluate import METRIC_KEYS, evaluate, table
from workbench.evaluate.synthetic import make_synthetic
from workbench.forecast import LearnedForecaster, RooflineForecaster
from workbench.forecast.base import Forecaster
from workbench.records import Forecast


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_problems=8, per_problem=20, gpus=("h100", "h200"), seed=2)


class Spy(Forecaster):
    """Records what it was trained on and refuses to forecast a problem it trained on."""

    name = "spy"
    log: list = []

    def fit(self, problems, candidates, measurements):
        self.trained = {m.problem_id for m in measurements}
        self.gpus = {m.hardware_key for m in measurements}
        Spy.log.append(self)
        return self

    def forecast(self, problem, candidate, hardware, parent=None, relative_to="reference"):
        assert problem.id not in self.trained, "a test problem leaked into training"
        return Forecast(forecaster=self.name, candidate_id=candidate.id, problem_id=problem.id,
                        hardware_key=hardware.key, probabilities=(1,) * 8)


def test_folds_hold_out_problems(data):
    Spy.log = []
    r = evaluate(Spy, *data, gpu="h100", folds=4, seed=0)
    assert len(Spy.log) == 4 and r.metrics["folds"] == 4
    forecast_problems = {f.problem_id for f in r.forecasts}
    assert forecast_problems == {p.id for p in data.problems}
    for spy in Spy.log:  # each fold trained on the other problems, h100 only
        assert len(spy.trained) == 6 and spy.gpus == {"h100"}
    # Uniform forecasts: accuracy is the share of bin 0 (argmax picks index 0 on ties).
    assert r.metrics["accuracy"] == pytest.approx(np.mean(r.true_bins == 0))


def test_cross_gpu_trains_on_one_scores_on_other(data):
    Spy.log = []
    r = evaluate(Spy, *data, train_gpu="h100", test_gpu="h200", folds=2)
    assert all(s.gpus == {"h100"} for s in Spy.log)
    assert {f.hardware_key for f in r.forecasts} == {"h200"}
    assert r.row()["train->test"] == "h100->h200"


def test_learned_metrics_and_plots(tmp_path, data):
    r = evaluate(lambda: LearnedForecaster(max_iter=30), *data, gpu="h100", folds=3,
                 out=tmp_path)
    for k in METRIC_KEYS:
        assert np.isfinite(r.metrics[k]), k
    assert r.metrics["n"] == sum(m.ok and m.hardware_key == "h100" for m in data.measurements)
    assert 0 <= r.metrics["ece"] <= 1 and 0 < r.metrics["top10_recovery_median"] <= 1
    assert set(r.per_problem_recovery) == {p.id for p in data.problems}
    for kind in ("reliability", "risk_coverage"):
        assert r.plots[kind].read_bytes()[:4] == b"\x89PNG"
    saved = json.loads(r.plots["metrics"].read_text())
    assert saved["metrics"]["brier"] == pytest.approx(r.metrics["brier"])
    assert "learned" in table([r])


def test_roofline_is_not_trained(data):
    r = evaluate(RooflineForecaster(), *data, gpu="h100")
    assert r.split.startswith("none") and r.metrics["folds"] == 1 and r.train_gpu == "-"


def test_errors(data):
    with pytest.raises(ConfigError, match="--gpu"):
        evaluate(RooflineForecaster(), *data)  # two GPUs present, none named
    with pytest.raises(ConfigError, match="split"):
        evaluate(RooflineForecaster(), *data, gpu="h100", split="random")
    with pytest.raises(ConfigError, match="a100"):
        evaluate(RooflineForecaster(), *data, gpu="a100")
    one = make_synthetic(n_problems=1, per_problem=12, seed=3)
    with pytest.raises(ConfigError, match="2 problems"):
        evaluate(Spy, *one, gpu="h100")


def test_fixed_held_out_problems(data):
    """test_problems: one fit on every other problem, scored on the held-out ones only."""
    Spy.log = []
    held = sorted(p.id for p in data.problems)[:3]
    r = evaluate(Spy, *data, gpu="h100", test_problems=held)
    assert len(Spy.log) == 1 and r.metrics["folds"] == 1
    assert Spy.log[0].trained == {p.id for p in data.problems} - set(held)
    assert {f.problem_id for f in r.forecasts} == set(held)
    assert r.metrics["n"] == sum(m.ok and m.hardware_key == "h100" and m.problem_id in held
                                 for m in data.measurements)
    assert set(r.per_problem_recovery) == set(held)
    with pytest.raises(ConfigError, match="heldout-problems"):
        evaluate(Spy, *data, gpu="h100", split="none", test_problems=held)
    with pytest.raises(ConfigError, match="held-out"):
        evaluate(Spy, *data, gpu="h100", test_problems=["L9/99_missing"])
