"""benchmarks/forecast_variants.py on a small synthetic feature file (the real run is its committed result)."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from workbench import bins
from workbench.forecast.features import FEATURE_NAMES

_BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(_BENCH))
spec = importlib.util.spec_from_file_location("forecast_variants", _BENCH / "forecast_variants.py")
fv = importlib.util.module_from_spec(spec)
sys.modules["forecast_variants"] = fv
spec.loader.exec_module(fv)

REF = FEATURE_NAMES.index("ref_log10_us")


def _features(tmp_path: Path, problems: int = 10, per: int = 20) -> Path:
    rng = np.random.default_rng(0)
    n = problems * per
    X = rng.normal(size=(n, len(FEATURE_NAMES)))
    groups = np.repeat([f"L1/{i:02d}_p" for i in range(problems)], per)
    offset = np.repeat(rng.normal(scale=0.5, size=problems), per)
    log2s = 1.2 * X[:, 0] - 0.8 * X[:, 1] + offset + rng.normal(scale=0.3, size=n)
    speedups = 2.0 ** log2s
    speedups[rng.random(n) < 0.05] = np.nan  # failed candidates: train p_fail only
    reference_ms = np.repeat(rng.uniform(0.01, 2.0, size=problems), per)
    info = {"gpu": "h100", "torch": "test", "rows": n, "ok_rows": int(np.isfinite(speedups).sum()),
            "problems": problems, "feature_names": list(FEATURE_NAMES)}
    path = tmp_path / "f.npz"
    np.savez_compressed(path, X=X, speedups=speedups, groups=groups, reference_ms=reference_ms,
                        info=json.dumps(info))
    return path


@pytest.mark.parametrize("name", ["default", "ens5_features50", "local_residuals", "scaled_residuals",
                                  "classifier"])
def test_each_variant_scores_on_problem_grouped_folds(tmp_path, name):
    out = fv.run_one(str(_features(tmp_path)), name, seed=0)
    assert out["variant"] == name and out["seed"] == 0
    for k in ("off_by_one", "accuracy", "ece", "brier"):
        assert 0.0 <= out[k] <= 1.0 + 1e-9, k
    assert out["off_by_one"] >= out["accuracy"]
    # features that carry most of the signal: far better than the 3/8 a uniform guess gets
    assert out["off_by_one"] > 0.6


def test_the_variants_produce_distributions(tmp_path):
    X, s, g, _, _ = fv._load(_features(tmp_path))
    for cls in (fv.Ensemble, fv.LocalResiduals, fv.ScaledResiduals):
        p = cls(n_threads=1).fit_matrix(X, s, g).predict_proba(X[:20])
        assert p.shape == (20, bins.N_BINS)
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
        assert (p > 0).all()


def test_measured_reference_replaces_the_estimated_reference_time(tmp_path, monkeypatch):
    path = _features(tmp_path)
    seen = []
    real = fv.L.LearnedForecaster.fit_matrix

    def spy(self, X, *a, **kw):
        seen.append(X[:, REF].copy())
        return real(self, X, *a, **kw)

    monkeypatch.setattr(fv.L.LearnedForecaster, "fit_matrix", spy)
    fv.run_one(str(path), "measured_reference", seed=0)
    X, _, g, ref, _ = fv._load(path)
    measured = np.log10(1 + 1e3 * ref)
    assert len(seen) == 5  # one model per fold
    for col in seen:  # every training row carries its problem's measured time, not the estimate
        assert set(np.round(col, 9)) <= set(np.round(measured, 9))
        assert not np.isin(np.round(col, 9), np.round(X[:, REF], 9)).any()


def test_summarise_pairs_each_variant_with_default_on_the_same_seed():
    runs = [{"variant": v, "seed": s, "seconds": 1.0, "off_by_one": o, "accuracy": 0.4, "ece": 0.05,
             "brier": 0.3, "top10_recovery_median": 0.9}
            for v, s, o in [("default", 0, 0.80), ("default", 1, 0.70), ("x", 0, 0.82), ("x", 1, 0.69),
                            ("y", 0, 0.5)]]
    out = fv.summarise(runs, [0, 1])
    assert out["x"]["delta_off_by_one"]["per_seed"] == pytest.approx([0.02, -0.01])
    assert out["x"]["off_by_one"]["mean"] == pytest.approx(0.755)
    assert out["default"]["delta_off_by_one"]["mean"] == 0.0
    assert "y" not in out  # a variant missing a seed is not summarised


def test_variant_names_and_files_are_checked(tmp_path):
    assert fv.parse_variants(";".join(fv.VARIANTS)) == list(fv.VARIANTS)
    with pytest.raises(SystemExit, match="unknown variants"):
        fv.parse_variants("default;nope")
    with pytest.raises(SystemExit, match="default"):
        fv.parse_variants("leaf50")
    path = _features(tmp_path)
    with pytest.raises(SystemExit, match="h200"):
        fv.main(["--features", str(path), "--gpu", "h200"])
    d = dict(np.load(path))
    info = json.loads(str(d["info"]))
    info["feature_names"] = info["feature_names"][:-1]
    d["info"] = json.dumps(info)
    np.savez(tmp_path / "old.npz", **d)
    with pytest.raises(SystemExit, match="other features"):
        fv._load(tmp_path / "old.npz")
