"""`workbench evaluate` and benchmarks/forecast_bench.py on SYNTHETIC shipped-layout data."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main
from workbench.dataset import write_shipped
from workbench.evaluate.synthetic import make_synthetic
from bench_scripts import load_bench

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "forecast_bench.py"


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    d = tmp_path_factory.mktemp("synthetic_shipped")
    data = make_synthetic(n_problems=6, per_problem=16, gpus=("h100", "h200"), seed=4)
    write_shipped(tuple(data), d)
    return d


def test_cli_roofline_prints_table(shipped, tmp_path, capsys):
    rc = main(["evaluate", "--forecaster", "roofline", "--gpu", "h100", "--source", str(shipped),
               "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "roofline" in out and "ECE" in out and "AURC" in out
    assert (tmp_path / "roofline-h100" / "reliability.png").exists()
    saved = json.loads((tmp_path / "roofline-h100" / "metrics.json").read_text())["metrics"]
    line = next(ln for ln in out.splitlines() if "problem offsets" in ln)
    assert f"spread {saved['problem_offset_sd_log2']:.2f} octaves" in line
    assert f"would be {saved['oracle_offset_off_by_one']:.3f}" in line
    assert saved["oracle_offset_off_by_one"] >= 0.0 and saved["within_problem_mad_log2"] >= 0.0


def test_cli_needs_a_gpu(shipped, capsys):
    assert main(["evaluate", "--source", str(shipped)]) == 1
    assert "--gpu" in capsys.readouterr().err


@pytest.mark.parametrize("option, expected", [((), "measured"), (("--reference-time", "estimate"), "estimate")])
def test_cli_learned_reference_time(shipped, tmp_path, capsys, monkeypatch, option, expected):
    """The learned forecaster the CLI builds reads measured reference times by default;
    --reference-time estimate reaches it too."""
    import workbench.commands.evaluate as cmd

    made = []
    real = cmd.make_forecaster

    def spy(*args):
        made.append(real(*args))
        return made[-1]

    monkeypatch.setattr(cmd, "make_forecaster", spy)
    assert main(["evaluate", "--gpu", "h100", "--source", str(shipped), "--folds", "3",
                 *option, "--out", str(tmp_path)]) == 0
    assert "learned" in capsys.readouterr().out
    assert made and all(f.reference_time == expected for f in made)
    # fitted with measured times: they recorded their training rows' (evaluate gives the scored
    # rows' times to a copy, `with_reference_times`, and leaves the fitted forecaster as it was)
    assert all((len(f.reference_ms_) > 0) == (expected == "measured") for f in made[1:])
    with pytest.raises(SystemExit):
        main(["evaluate", "--gpu", "h100", "--reference-time", "guess"])


def test_cli_missing_database(tmp_path, capsys):
    assert main(["--db", str(tmp_path / "none.sqlite"), "evaluate", "--gpu", "h100"]) == 1
    assert "load-shipped" in capsys.readouterr().err


def _bench():
    return load_bench("forecast_bench", BENCH)


def test_benchmark_writes_json(shipped, tmp_path):
    bench = _bench()
    out = tmp_path / "forecast-h100.json"
    assert bench.main(["--data", str(shipped), "--folds", "3", "--max-iter", "30",
                       "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "forecast" and doc["gpu"] == "h100" and doc["synthetic"] is True
    assert set(doc["metrics"]) == {"learned", "roofline", "random", "climatology", "cross_gpu",
                                   "cross_gpu_random", "cross_gpu_climatology"}
    assert doc["bin_convention"] == "prompt-table"
    for name, m in doc["metrics"].items():
        for k in ("top10_recovery_median", "ece", "brier", "crps", "accuracy", "off_by_one",
                  "aurc", "spearman", "problem_offset_sd_log2", "within_problem_mad_log2",
                  "oracle_offset_off_by_one", "pair_acc_125", "pair_acc_110", "brier_skill",
                  "crps_skill", "sharpness", "spearman_within_median"):
            assert k in m, (name, k)
        for k in ("pair_acc_125", "brier_skill", "ece", "sharpness"):
            lo, hi = m[f"{k}_ci"]
            assert lo <= m[k] <= hi
        assert ("vs_random" in m) == (name in ("learned", "roofline", "cross_gpu"))
    assert doc["metrics"]["climatology"]["brier_skill"] == 0.0
    assert doc["metrics"]["cross_gpu_climatology"]["crps_skill"] == 0.0
    assert doc["metrics"]["cross_gpu"]["test_gpu"] == "h200"


def test_benchmark_refuses_synthetic_into_results(shipped):
    bench = _bench()
    with pytest.raises(SystemExit, match="synthetic"):
        bench.run(shipped, "h100", None, bench.RESULTS_DIR / "forecast-h100.json")
    assert not (bench.RESULTS_DIR / "forecast-h100.json").exists() or \
        not json.loads((bench.RESULTS_DIR / "forecast-h100.json").read_text()).get("synthetic")


def test_benchmark_fixed_ideal_offset_is_an_ablation_with_its_own_name(shipped, tmp_path, capsys):
    bench = _bench()
    out = tmp_path / "ablation.json"
    assert bench.main(["--data", str(shipped), "--folds", "3", "--max-iter", "30", "--cross-gpu", "",
                       "--ideal-offset", "0.5", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "forecast-offset-0.5" and doc["learned"]["ideal_offset"] == 0.5
    assert bench.benchmark_name("auto") == "forecast"
    with pytest.raises(SystemExit):
        bench.main(["--data", str(shipped), "--ideal-offset", "-1"])
    assert "expected 'auto' or a number >= 0" in capsys.readouterr().err


def test_split_seeds_repeat_the_learned_cross_validation(shipped, tmp_path, capsys):
    """--split-seeds 2: the same CV with two fold assignments; each metric per seed with its spread,
    seed 0 equal to the default run's learned metrics."""
    bench = _bench()
    out = tmp_path / "splits.json"
    assert bench.main(["--data", str(shipped), "--folds", "3", "--max-iter", "30", "--split-seeds", "2",
                       "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "forecast-splits" and doc["split_seeds"] == [0, 1] and doc["synthetic"] is True
    obo = doc["metrics"]["learned"]["off_by_one"]
    assert len(obo["per_seed"]) == 2 and obo["min"] <= obo["mean"] <= obo["max"]
    assert obo["sd"] == pytest.approx(abs(obo["per_seed"][0] - obo["per_seed"][1]) / 2 ** 0.5)
    for control in ("random", "climatology"):   # the controls on the same folds, per seed
        assert len(doc["metrics"][control]["off_by_one"]["per_seed"]) == 2
    one = tmp_path / "one.json"
    assert bench.main(["--data", str(shipped), "--folds", "3", "--max-iter", "30", "--cross-gpu", "",
                       "--out", str(one)]) == 0
    assert json.loads(one.read_text())["metrics"]["learned"]["off_by_one"] == pytest.approx(obo["per_seed"][0])
    with pytest.raises(SystemExit, match="at least 2"):
        bench.main(["--data", str(shipped), "--split-seeds", "1", "--out", str(out)])


def test_benchmark_estimate_reference_time_has_its_own_name(shipped, tmp_path):
    """The learned forecaster reads the measured reference times by default; with
    --reference-time estimate it reads only the estimate, and every results name says so."""
    bench = _bench()
    out = tmp_path / "estimate.json"
    assert bench.main(["--data", str(shipped), "--folds", "3", "--max-iter", "30", "--cross-gpu", "",
                       "--reference-time", "estimate", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "forecast-estimate-reference"
    assert doc["learned"]["reference_time"] == "estimate"
    default = tmp_path / "default.json"
    assert bench.main(["--data", str(shipped), "--folds", "3", "--max-iter", "30", "--cross-gpu", "",
                       "--out", str(default)]) == 0
    base = json.loads(default.read_text())
    assert base["benchmark"] == "forecast"
    assert base["learned"]["reference_time"] == "measured" and base["learned"]["reference_use"] == "auto"
    # same folds, same rows; the roofline does not read reference times (that the learned
    # model's held-out forecasts use them: tests/forecast/test_learned.py)
    assert doc["metrics"]["roofline"] == base["metrics"]["roofline"]
    assert doc["metrics"]["learned"]["n"] == base["metrics"]["learned"]["n"]
    assert bench.benchmark_name(0.5, "estimate") == "forecast-offset-0.5-estimate-reference"
    assert bench.benchmark_name(0.5, "measured") == "forecast-offset-0.5"


@pytest.fixture(scope="module")
def dated(tmp_path_factory):
    """Shipped-layout synthetic data whose last two problems were first measured later."""
    data = make_synthetic(n_problems=6, per_problem=16, gpus=("h100",), seed=5)
    late = sorted(p.id for p in data.problems)[-2:]
    ms = [m.replace(measured_at="2026-11-25T10:00:00Z") if m.problem_id in late
          else m.replace(measured_at="2026-11-23T10:00:00Z") for m in data.measurements]
    d = tmp_path_factory.mktemp("dated_shipped")
    write_shipped((data.problems, data.candidates, ms), d)
    return d, ms, late


def test_benchmark_prospective_holds_out_the_later_problems(dated, tmp_path):
    """--prospective-after: the problems first measured after the date are the test set."""
    d, ms, late = dated
    bench = _bench()
    assert bench.added_after(ms, "h100", "2026-11-24") == late
    out = tmp_path / "forecast-prospective-h100.json"
    assert bench.main(["--data", str(d), "--max-iter", "30", "--prospective-after", "2026-11-24",
                       "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "forecast-prospective" and doc["test_problems"] == late
    assert doc["n_train_problems"] == 4
    assert set(doc["metrics"]) == {"learned", "roofline", "random", "climatology"}   # with its controls
    n_late = sum(m.ok and m.problem_id in late for m in ms)
    assert {m["n"] for m in doc["metrics"].values()} == {n_late}
    assert set(doc["per_problem_recovery"]["learned"]) == set(late)
    # the offsets are the per-problem terms of metrics.problem_offsets: their sd is its sd
    offsets = doc["per_problem_offset_log2"]["learned"]
    assert set(offsets) == set(late)
    assert np.std(list(offsets.values())) == pytest.approx(
        doc["metrics"]["learned"]["problem_offset_sd_log2"])
    with pytest.raises(SystemExit, match="split"):
        bench.main(["--data", str(d), "--prospective-after", "2026-11-26", "--out", str(out)])


def test_added_after_compares_at_the_precision_given(dated):
    """A time of day splits problems first measured on the same date; a problem counts from its
    earliest row; a malformed time is refused."""
    _, ms, late = dated
    bench = _bench()
    first, second = late
    ms = [m.replace(measured_at="2026-11-25T14:30:00Z") if m.problem_id == second else m for m in ms]
    # one early row of `second`'s on the morning: its earliest row decides
    i = next(i for i, m in enumerate(ms) if m.problem_id == second)
    assert bench.added_after(ms, "h100", "2026-11-24") == late
    assert bench.added_after(ms, "h100", "2026-11-25T12") == [second]
    assert bench.added_after(ms, "h100", "2026-11-25T14:30") == []
    assert bench.added_after(ms, "h100", "2026-11-25T14:29:59") == [second]
    ms[i] = ms[i].replace(measured_at="2026-11-25T09:00:00Z")
    assert bench.added_after(ms, "h100", "2026-11-25T12") == []
    assert bench.added_after(ms, "h200", "2026-11-24") == []
    with pytest.raises(SystemExit, match="YYYY-MM-DD"):
        bench.added_after(ms, "h100", "25 Nov")


def test_benchmark_splits_scored_by_when_problems_were_added(dated, tmp_path):
    """--split-seeds with --prospective-after: the same forecasts scored on the early and the
    late problems' rows, which together make up all rows."""
    d, ms, late = dated
    bench = _bench()
    out = tmp_path / "forecast-splits-h100.json"
    assert bench.main(["--data", str(d), "--folds", "3", "--max-iter", "30", "--split-seeds", "2",
                       "--prospective-after", "2026-11-24", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["problems_added_after"] == late and doc["after"] == "2026-11-24"
    m = doc["metrics"]
    assert set(m) == {"learned", "learned_by_2026-11-24", "learned_after_2026-11-24", "random", "climatology"}
    n_late = sum(x.ok and x.problem_id in late for x in ms)
    n_all = sum(x.ok for x in ms)
    for seed in range(2):
        # The row-weighted mean of the two parts is the whole.
        whole = m["learned"]["off_by_one"]["per_seed"][seed]
        early = m["learned_by_2026-11-24"]["off_by_one"]["per_seed"][seed]
        later = m["learned_after_2026-11-24"]["off_by_one"]["per_seed"][seed]
        assert whole == pytest.approx((early * (n_all - n_late) + later * n_late) / n_all)
