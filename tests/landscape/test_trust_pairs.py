"""The risk-coverage helpers of workbench/landscape/trust.py and benchmarks/trust_pairs_bench.py
(on synthetic pairs and SYNTHETIC landscapes; nothing is written to benchmarks/results)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from test_certified_skip import gaussian_bins
from test_search_landscape import HELD, oracle_as_learned, ship  # noqa: F401 (ship: the synthetic landscapes fixture)
from workbench.errors import ConfigError
from workbench.landscape.trust import rank_auc, risk_by_share
from bench_scripts import load_bench

ROOT = Path(__file__).resolve().parents[2]
bench = load_bench("trust_pairs_bench")


def test_risk_by_share_is_the_loss_rate_of_the_most_confident_pairs():
    conf = np.array([0.9, 0.1, 0.8, 0.8, 0.3])
    loss = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    r = risk_by_share(conf, loss, [0.2, 0.4, 0.6, 1.0, 0.1])
    # order: 0.9 (0), 0.8 (1, first of the tie), 0.8 (0), 0.3 (1), 0.1 (1)
    assert r == {"top0.2": 0.0, "top0.4": 0.5, "top0.6": 1 / 3, "top1": 0.6, "top0.1": None}
    with pytest.raises(ConfigError):
        risk_by_share(conf, loss, [0.0])
    with pytest.raises(ConfigError):
        risk_by_share(conf, loss[:3], [0.5])


def test_rank_auc_matches_mann_whitney_with_ties_and_reads_the_right_way_round():
    rng = np.random.default_rng(3)
    conf = rng.integers(0, 6, 300).astype(float)
    loss = (rng.random(300) < 0.4).astype(float)
    u = stats.mannwhitneyu(conf[loss == 0], conf[loss == 1]).statistic
    assert rank_auc(conf, loss) == pytest.approx(u / ((loss == 0).sum() * (loss == 1).sum()))
    assert rank_auc([0.9, 0.8, 0.2, 0.1], [0, 0, 1, 1]) == 1.0  # confident pairs never lost
    assert rank_auc([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1]) == 0.0
    assert rank_auc([0.5, 0.6], [0, 0]) is None


def test_summarise_separates_an_informative_forecast_from_its_random_control():
    rng = np.random.default_rng(0)
    n = 4000
    parent = np.exp(rng.normal(0, 0.5, n))
    child = parent * np.exp(rng.normal(0, 0.3, n))
    p = gaussian_bins(np.log2(child) + rng.normal(0, 0.05, n), 0.1)  # knows the child well
    m = bench.summarise(p, parent, child, margins=(0.0, 0.05), shares=(0.1, 1.0), risks=(0.1,))
    for key, margin in (("0", 0.0), ("0.05", 0.05)):
        x = m[key]
        assert x["pairs"] == n
        assert x["base_rate"] == pytest.approx(np.mean(child > parent * (1 + margin)))
        assert x["risk_by_share"]["top1"] == pytest.approx(x["base_rate"])
        assert x["risk_by_share"]["top0.1"] < 0.05 < x["base_rate"]
        assert x["auc"] > 0.9 and abs(x["auc_random"] - 0.5) < 0.05
        assert abs(x["risk_by_share_random"]["top0.1"] - x["base_rate"]) < 0.06
        cert = x["certificates"]["0.1"]
        assert cert["threshold"] is not None and cert["coverage"] > 0.2 and cert["risk"] <= 0.1
    # a forecast that knows nothing certifies nothing at a risk below the base rate
    flat = bench.summarise(np.full((n, 8), 1 / 8), parent, child, margins=(0.0,), shares=(1.0,), risks=(0.1,))
    assert flat["0"]["certificates"]["0.1"]["threshold"] is None
    assert abs(flat["0"]["auc"] - 0.5) < 0.05  # its confidence moves with the parent only


def test_bench_reads_training_landscapes_only_and_writes_only_under_out(ship, tmp_path, monkeypatch):  # noqa: F811
    fits = oracle_as_learned(ship, bench.FORECASTERS, monkeypatch)
    out = tmp_path / "out"
    assert bench.main(["--landscapes", str(ship), "--gpu", "h100", "--forecaster", "learned",
                       "--folds", "2", "--parents", "8", "--out", str(out)]) == 0
    doc = json.loads((out / "trust-pairs-h100.json").read_text())
    assert not (bench.RESULTS_DIR / "trust-pairs-h100.json").exists()
    assert len(fits) == 2 and all(HELD not in f for f in fits)  # one fit per fold, none on the held-out rows
    assert doc["setup"]["synthetic"] is True and HELD not in doc["setup"]["problems"]
    assert doc["setup"]["pairs"] > 0 and set(doc["metrics"]) == {f"{x:g}" for x in bench.MARGINS}
    for x in doc["metrics"].values():
        assert x["pairs"] == doc["setup"]["pairs"] and 0 <= x["base_rate"] <= 1
        assert set(x["risk_by_share"]) == {f"top{s:g}" for s in bench.SHARES}
        assert x["risk_by_share"]["top1"] == pytest.approx(x["base_rate"])
    assert doc["metrics"]["0"]["auc"] > 0.7  # the double knows the speedups up to noise


def test_bench_with_the_best_reference_writes_its_own_file(ship, tmp_path, monkeypatch):  # noqa: F811
    oracle_as_learned(ship, bench.FORECASTERS, monkeypatch)
    args = ["--landscapes", str(ship), "--gpu", "h100", "--forecaster", "learned", "--folds", "2", "--parents", "8"]
    assert bench.main(args + ["--out", str(tmp_path / "p")]) == 0
    assert bench.main(args + ["--reference", "best", "--out", str(tmp_path / "b")]) == 0
    parent = json.loads((tmp_path / "p" / "trust-pairs-h100.json").read_text())
    best = json.loads((tmp_path / "b" / "trust-pairs-best-h100.json").read_text())
    assert (parent["setup"]["reference"], best["setup"]["reference"]) == ("parent", "best")
    assert parent["setup"]["pairs"] == best["setup"]["pairs"]  # the same pairs, judged against more
    assert best["metrics"]["0"]["base_rate"] < parent["metrics"]["0"]["base_rate"]
