"""Controls scored beside a forecaster on the same folds; the study's answers through the scorer."""
from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from workbench.cli import main
from workbench.dataset import write_shipped
from workbench.errors import ConfigError
from workbench.evaluate import evaluate
from workbench.evaluate.controls import (discrimination_reports, evaluate_with_controls,
                                         skill_table, write_forecasts)
from workbench.evaluate.crossval import score
from workbench.evaluate.synthetic import make_synthetic
from workbench.forecast import RooflineForecaster
from workbench.forecast.parsing import parse_answer


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_problems=8, per_problem=24, gpus=("h100",), seed=5)


@pytest.fixture(scope="module")
def results(data):
    return evaluate_with_controls({"roofline": RooflineForecaster()}, *data, gpu="h100", folds=4)


def test_controls_are_scored_on_the_same_rows_and_folds(results):
    assert list(results) == ["roofline", "random", "climatology"]
    ids = [f.candidate_id for f in results["roofline"].forecasts]
    for r in results.values():
        assert [f.candidate_id for f in r.forecasts] == ids
    clim = results["climatology"]
    assert set(clim.fold_of_rows.tolist()) == {0, 1, 2, 3}
    # one distribution per fold, never fitted on the fold it scores
    for fold in range(4):
        rows = np.flatnonzero(clim.fold_of_rows == fold)
        assert len({clim.forecasts[i].probabilities for i in rows}) == 1


def test_random_control_has_no_skill_and_climatology_none_over_itself(results):
    reps = discrimination_reports(results, n_boot=200)
    clim, rnd = reps["climatology"].values(), reps["random"].values()
    assert clim["brier_skill"] == 0.0 and clim["crps_skill"] == 0.0
    assert clim["pair_acc_125"] == 0.5 and np.isnan(clim["spearman_within_median"])
    assert abs(rnd["pair_acc_125"] - 0.5) < 0.1
    lo, hi = reps["random"].to_dict()["spearman_within_median_ci"]
    assert lo < 0 < hi
    assert rnd["sharpness"] == pytest.approx(1 / 8, abs=1e-5)
    text = skill_table(reps)
    assert "roofline - random" in text and "climatology" in text


def test_unaligned_results_are_refused(data, results):
    other = evaluate(RooflineForecaster(), data.problems, data.candidates,
                     data.measurements[: len(data.measurements) // 2], gpu="h100")
    with pytest.raises(ConfigError):
        discrimination_reports(dict(results, roofline=other))


def test_forecasts_parquet_recomputes_the_metrics(results, tmp_path):
    path = write_forecasts(results, tmp_path / "f.parquet")
    t = pq.read_table(path).to_pandas()
    assert set(t.forecaster) == {"roofline", "random", "climatology"}
    assert (t.bin_convention == "prompt-table").all()
    r = results["roofline"]
    rows = t[t.forecaster == "roofline"]
    probs = rows[[f"p_bin{b}" for b in range(1, 9)]].to_numpy()
    again = score(r.forecasts, rows.true_bin.to_numpy() - 1, rows.speedup.to_numpy(),
                  rows.problem_id.to_numpy())
    assert np.allclose(probs, r.probabilities)
    assert again["ece"] == pytest.approx(r.metrics["ece"])


def test_bin_convention_changes_the_labels(data):
    a = evaluate(RooflineForecaster(), *data, gpu="h100")
    b = evaluate(RooflineForecaster(), *data, gpu="h100", bin_convention="study-code")
    assert b.bin_convention == "study-code" and b.to_json()["bin_convention"] == "study-code"
    assert np.all(b.true_bins <= a.true_bins) and np.any(b.true_bins < a.true_bins)
    with pytest.raises(ConfigError):
        evaluate(RooflineForecaster(), *data, gpu="h100", bin_convention="other")


def test_the_study_answer_format_through_parser_and_scorer():
    """Answers in the study's format (flat p_<bin> fields, a stated predicted_bin), hand-written
    from its field list, parsed and scored with the stated bin and with the argmax."""
    names = ("severe_slowdown", "significant_slowdown", "moderate_slowdown", "minor_slowdown",
             "minor_speedup", "significant_speedup", "high_speedup", "extreme_speedup")

    def answer(probs, stated):
        return json.dumps({"predicted_bin": stated, "reasoning": "r",
                           **{f"p_{n}": p for n, p in zip(names, probs)}})

    # row 1: argmax bin 4, stated 5, truth bin 5; row 2: argmax = stated = bin 6, truth bin 6
    a1 = parse_answer(tool_arguments=answer([0, 0, 0, 0.5, 0.4, 0.1, 0, 0], 5))
    a2 = parse_answer(tool_arguments=answer([0, 0, 0, 0, 0.2, 0.7, 0.1, 0], 6))
    bad = parse_answer(tool_arguments='{"predicted_bin": 5, "reasoning": "it is fast"}')
    assert a1.ok and a2.ok and not bad.ok
    fs = [a.to_forecast("study", f"c{i}", "p", "a100") for i, a in enumerate((a1, a2, bad))]
    y = np.array([4, 5, 3])
    speedups = np.array([1.2, 1.7, 0.8])
    groups = np.array(["p", "p", "p"])
    stated = score(fs, y, speedups, groups, predicted_bin="stated")
    argmax = score(fs, y, speedups, groups)
    # the abstention is scored uniform: its argmax (lowest index) is bin 1, wrong either way
    assert stated["accuracy"] == pytest.approx(2 / 3) and argmax["accuracy"] == pytest.approx(1 / 3)
    assert stated["n_stated"] == 2 and stated["n_abstained"] == 1
    # ECE with the stated bin's probability as confidence: buckets 0.4 (right), 0.7 (right),
    # 0.125 (wrong) -> (0.6 + 0.3 + 0.125) / 3
    assert stated["ece"] == pytest.approx((0.6 + 0.3 + 0.125) / 3)


def test_cli_scores_controls_and_writes_forecasts(tmp_path, capsys):
    d = tmp_path / "shipped"
    write_shipped(tuple(make_synthetic(n_problems=5, per_problem=16, gpus=("h100",), seed=6)), d)
    out = tmp_path / "eval"
    assert main(["evaluate", "--forecaster", "roofline", "--gpu", "h100", "--source", str(d),
                 "--bootstrap", "50", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "prompt-table convention" in text and "roofline - random" in text
    t = pq.read_table(out / "forecasts.parquet").to_pandas()
    assert set(t.forecaster) == {"roofline", "random", "climatology"}
