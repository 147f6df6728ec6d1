"""benchmarks/forecast_variants.py on a small synthetic feature file (the real run is its committed result)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from workbench import bins
from workbench.forecast.features import FEATURE_NAMES
from bench_scripts import load_bench

fv = load_bench("forecast_variants")

REF = FEATURE_NAMES.index("ref_log10_us")
#: Problem-grouped folds per run: the benchmark's 5 fit the same code path with more models.
FOLDS = 3


def _features(tmp_path: Path, problems: int = 10, per: int = 20, estimate: bool = False) -> Path:
    """A synthetic feature file; with `estimate`, ref_log10_us is a traced-like estimate of the
    measured reference time (within about a factor of 2, row by row) instead of noise."""
    rng = np.random.default_rng(0)
    n = problems * per
    X = rng.normal(size=(n, len(FEATURE_NAMES)))
    groups = np.repeat([f"L1/{i:02d}_p" for i in range(problems)], per)
    offset = np.repeat(rng.normal(scale=0.5, size=problems), per)
    log2s = 1.2 * X[:, 0] - 0.8 * X[:, 1] + offset + rng.normal(scale=0.3, size=n)
    speedups = 2.0 ** log2s
    speedups[rng.random(n) < 0.05] = np.nan  # failed candidates: train p_fail only
    reference_ms = np.repeat(rng.uniform(0.01, 2.0, size=problems), per)
    if estimate:
        X[:, REF] = np.log10(1 + 1e3 * reference_ms * 2.0 ** rng.normal(scale=0.5, size=n))
    info = {"gpu": "h100", "torch": "test", "rows": n, "ok_rows": int(np.isfinite(speedups).sum()),
            "problems": problems, "feature_names": list(FEATURE_NAMES)}
    ops = {g: {"ops": {("mm", "add", "_softmax")[i % 3]: 1 + i % 2}, "dtype": "fp32"}
           for i, g in enumerate(dict.fromkeys(groups))}
    path = tmp_path / "f.npz"
    np.savez_compressed(path, X=X, speedups=speedups, groups=groups, reference_ms=reference_ms,
                        info=json.dumps(info), problem_ops=json.dumps(ops))
    return path


@pytest.mark.parametrize("name", ["default", "ens5_features50", "local_residuals", "scaled_residuals",
                                  "classifier", "ops_neighbour_offset"])
def test_each_variant_scores_on_problem_grouped_folds(tmp_path, name):
    out = fv.run_one(str(_features(tmp_path)), name, seed=0, folds=FOLDS)
    assert out["variant"] == name and out["seed"] == 0
    for k in ("off_by_one", "accuracy", "ece", "brier"):
        assert 0.0 <= out[k] <= 1.0 + 1e-9, k
    assert out["off_by_one"] >= out["accuracy"]
    # features that carry most of the signal: far better than the 3/8 a uniform guess gets;
    # the synthetic problem offsets are unrelated to the op bags, so the neighbour offset only adds
    # noise there (its own test gives it offsets that follow the ops)
    assert out["off_by_one"] > (0.45 if name == "ops_neighbour_offset" else 0.6)


def test_measured_reference_variants_score_like_the_default_on_uninformative_times(tmp_path):
    """The synthetic speedups do not depend on the reference time: a variant that enters it
    must score about as the default does (the modes must not corrupt the other features)."""
    path = _features(tmp_path, estimate=True)
    base = fv.run_one(str(path), "default", seed=0, folds=FOLDS)
    for name in ("measured_reference", "measured_reference_everywhere", "reference_error"):
        out = fv.run_one(str(path), name, seed=0, folds=FOLDS)
        assert abs(out["off_by_one"] - base["off_by_one"]) < 0.1, name
        assert out["off_by_one"] > 0.6, name


def test_measured_reference_auto_records_its_choices_and_the_estimate_fallback(tmp_path):
    """The forecaster's own choice of reference use, fold by fold, and the same models scored
    with the test problems' times unknown (which on these uninformative times scores close)."""
    path = _features(tmp_path, estimate=True)
    out = fv.run_one(str(path), "measured_reference_auto", seed=0, folds=FOLDS)
    assert len(out["reference_use_per_fold"]) == FOLDS
    assert set(out["reference_use_per_fold"]) <= {"feature", "everywhere"}
    d = out["diagnostics"]
    assert 0.0 <= d["estimate_fallback_ece"] <= 1.0
    assert out["off_by_one"] > 0.6 and abs(d["estimate_fallback_off_by_one"] - out["off_by_one"]) < 0.1
    summary = fv.summarise([out, fv.run_one(str(path), "default", seed=0, folds=FOLDS)], [0])
    assert summary["measured_reference_auto"]["reference_use_per_fold"] == {"0": out["reference_use_per_fold"]}
    assert "estimate_fallback_off_by_one" in summary["measured_reference_auto"]["diagnostics"]


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
    fv.run_one(str(path), "measured_reference", seed=0, folds=FOLDS)
    X, _, g, ref, _ = fv._load(path)
    measured = np.log10(1 + 1e3 * ref)
    assert len(seen) == FOLDS  # one model per fold
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


def test_measured_reference_modes_change_the_features_built_from_the_reference_time():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, len(FEATURE_NAMES)))
    X[:, REF] = np.log10(1 + 1e3 * np.array([0.1, 0.1, 0.2, 0.2, 0.4, 0.4]))  # estimates, ms
    measured = np.array([0.4, 0.4, 0.2, 0.2, np.nan, np.nan])  # 4x slower, exact, unknown
    ideal, share = FEATURE_NAMES.index("log2_ideal_speedup"), FEATURE_NAMES.index("ref_launch_share")
    assert fv.with_measured_reference(X, measured, None) is X
    feat = fv.with_measured_reference(X, measured, "feature")
    np.testing.assert_allclose(feat[:4, REF], np.log10(1 + 1e3 * measured[:4]))
    np.testing.assert_array_equal(feat[4:], X[4:])
    np.testing.assert_array_equal(feat[:, ideal], X[:, ideal])
    every = fv.with_measured_reference(X, measured, "everywhere")
    np.testing.assert_allclose(every[:, ideal] - X[:, ideal], [2, 2, 0, 0, 0, 0], atol=1e-9)
    np.testing.assert_allclose(every[:, share] / X[:, share], [0.25, 0.25, 1, 1, 1, 1])
    err = fv.with_measured_reference(X, measured, "error_feature")
    assert err.shape == (6, len(FEATURE_NAMES) + 1)
    np.testing.assert_array_equal(err[:, :-1], X)
    np.testing.assert_allclose(err[:, -1], [2, 2, 0, 0, 0, 0], atol=1e-9)


def test_ops_neighbour_offset_moves_a_new_problem_by_its_op_family_error():
    """Three op families whose problems share an offset no feature shows: a held-out problem gets
    its family's offset (shrunk), and forecasts closer to the truth than the default."""
    rng = np.random.default_rng(2)
    families = {"mm": 1.5, "add": 0.0, "_softmax": -1.5}
    per, X, s, g, ops = 30, [], [], [], {}
    for i in range(15):
        op = list(families)[i % 3]
        pid = f"L1/{i:02d}_{op}"
        ops[pid] = {"ops": {op: 1}, "dtype": "fp32"}
        x = rng.normal(size=(per, len(FEATURE_NAMES)))
        X.append(x)
        s.append(2.0 ** (0.8 * x[:, 0] + families[op] + rng.normal(scale=0.2, size=per)))
        g += [pid] * per
    X, s, g = np.vstack(X), np.concatenate(s), np.asarray(g)
    held = np.isin(g, ["L1/12_mm", "L1/13_add", "L1/14__softmax"])
    fc = fv.OpsNeighbourOffset(problem_ops=ops, n_threads=1).fit_matrix(X[~held], s[~held], g[~held])
    off = dict(zip(["L1/12_mm", "L1/13_add", "L1/14__softmax"],
                   fc.offsets(["L1/12_mm", "L1/13_add", "L1/14__softmax"])))
    assert off["L1/12_mm"] > 0.8 and off["L1/14__softmax"] < -0.8 and abs(off["L1/13_add"]) < 0.3
    y = np.asarray([bins.bin_of(v) for v in s[held]])
    mine = fv.metrics.off_by_one_accuracy(fc.predict_proba_for(X[held], g[held].tolist()), y)
    base = fv.L.LearnedForecaster(n_threads=1).fit_matrix(X[~held], s[~held], g[~held])
    assert mine > fv.metrics.off_by_one_accuracy(base.predict_proba(X[held]), y) + 0.1


def test_default_diagnostics_on_a_hand_case():
    edges = np.log2(np.asarray(bins.EDGES))
    # problem a: forecast 2 octaves low on every row; problem b: exact
    log2s = np.array([1.2, 1.2, 0.1, 0.1])
    median = np.array([-0.8, -0.8, 0.1, 0.1])
    groups = np.array(["a", "a", "b", "b"])
    y = np.searchsorted(edges, log2s, side="left")
    d = fv.default_diagnostics(median, 2.0 ** log2s, groups, y)
    assert d["median_bin_off_by_one"] == 0.5  # a's medians sit 3 bins below (0.5-0.71 vs 2-4)
    assert d["oracle_offset_off_by_one"] == 1.0  # removing each problem's own error fixes a
    assert d["problem_offset_sd_log2"] == pytest.approx(1.0)  # errors 2 and 0
    assert d["within_problem_mad_log2"] == 0.0


def _doc(runs, variants, commit="c1", features=None):
    return {"benchmark": "forecast-variants", "gpu": "h100", "date": "2026-11-25", "commit": commit,
            "metrics": fv.summarise(runs, [0, 1]),
            "setup": {"seeds": [0, 1], "folds": 5, "features": features or {"rows": 10},
                      "variants": {v: {} for v in variants}, "jobs": 4, "seconds": 9.0},
            "runs": runs}


def _run(v, s, o, **extra):
    return {"variant": v, "seed": s, "seconds": 1.0, "off_by_one": o, "accuracy": 0.4, "ece": 0.05,
            "brier": 0.3, "top10_recovery_median": 0.9, **extra}


def test_merge_adds_a_partial_runs_variants_when_the_default_reproduces():
    committed = _doc([_run("default", 0, 0.8), _run("default", 1, 0.7), _run("leaf50", 0, 0.82),
                      _run("leaf50", 1, 0.69)], ["default", "leaf50"])
    partial = _doc([_run("default", 0, 0.8, diagnostics={"x": 1.0}),
                    _run("default", 1, 0.7, diagnostics={"x": 3.0}),
                    _run("iter50", 0, 0.9), _run("iter50", 1, 0.6)], ["default", "iter50"], commit="stale")
    doc = fv.merge(committed, partial, commit="c2")
    assert set(doc["metrics"]) == {"default", "leaf50", "iter50"}
    assert doc["metrics"]["iter50"]["delta_off_by_one"]["per_seed"] == pytest.approx([0.1, -0.1])
    assert doc["metrics"]["leaf50"] == committed["metrics"]["leaf50"]
    assert doc["metrics"]["default"]["diagnostics"]["x"]["mean"] == 2.0
    assert len(doc["runs"]) == 6 and doc["commit"] == "c2"
    first, second = doc["setup"]["runs_from"]
    assert first["commit"] == "c1" and first["variants"] == ["default", "leaf50"]
    assert second["commit"] == "c2" and second["recorded_commit"] == "stale"
    assert list(doc["setup"]["variants"]) == ["default", "leaf50", "iter50"]
    assert doc["setup"]["variants"]["iter50"]["kwargs"] == {"max_iter": 50}


def test_merge_refuses_a_default_that_does_not_reproduce_or_other_features():
    committed = _doc([_run("default", 0, 0.8), _run("default", 1, 0.7)], ["default"])
    moved = _doc([_run("default", 0, 0.8), _run("default", 1, 0.71)], ["default"])
    with pytest.raises(SystemExit, match="does not reproduce the committed off_by_one"):
        fv.merge(committed, moved)
    other = _doc([_run("default", 0, 0.8), _run("default", 1, 0.7)], ["default"], features={"rows": 11})
    with pytest.raises(SystemExit, match="another feature file"):
        fv.merge(committed, other)
