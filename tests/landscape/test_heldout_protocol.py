"""The held-out protocol: the committed file, the leak guard, inner-CV variant choice, and the
scripts refusing to fit on held-out problems."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.dataset import write_shipped
from workbench.evaluate.synthetic import make_synthetic
from workbench.families import family_ids
from workbench.landscape.protocol import (HeldOutLeakError, guard_forecaster, ProtocolError, inner_cv_choose,
                                          load_protocol)
from bench_scripts import load_bench

ROOT = Path(__file__).resolve().parents[2]


def test_committed_protocol_spans_levels_and_kinds():
    p = load_protocol()
    assert len(p.problems) >= 24 and len(p.heldout) >= 8
    assert not set(p.training) & set(p.heldout)
    assert {pid[:2] for pid in p.heldout} == {"L1", "L2", "L3"}
    assert set(p.problems) <= set(family_ids())  # every listed problem has a kernel family
    assert p.tie_rel == 0.02 and len(p.sha256) == 16


def test_results_name_the_committed_protocol_by_its_place_in_the_checkout(tmp_path):
    committed = load_protocol()
    assert committed.describe()["file"] == "workbench/data/heldout_landscapes.toml"
    outside = _protocol_file(tmp_path, sorted(committed.training), sorted(committed.heldout))
    assert load_protocol(outside).describe()["file"] == str(outside)     # a file elsewhere: as given


def _protocol_file(tmp_path, training, heldout, name="p.toml"):
    path = tmp_path / name
    path.write_text("training = %s\nheldout = %s\n" % (json.dumps(training), json.dumps(heldout)))
    return path


def test_malformed_protocols_are_refused(tmp_path):
    with pytest.raises(ProtocolError, match="no protocol file"):
        load_protocol(tmp_path / "missing.toml")
    few = _protocol_file(tmp_path, ["a"], ["b", "c"])
    with pytest.raises(ProtocolError, match="at least 8"):
        load_protocol(few)
    both = _protocol_file(tmp_path, ["x"], ["x"] + [f"h{i}" for i in range(8)], "both.toml")
    with pytest.raises(ProtocolError, match="both training and held out"):
        load_protocol(both)
    (tmp_path / "bad.toml").write_text("training = [")
    with pytest.raises(ProtocolError, match="TOML"):
        load_protocol(tmp_path / "bad.toml")


def test_check_fit_names_the_leaked_problems():
    p = load_protocol()
    p.check_fit(p.training, "fitting")
    with pytest.raises(HeldOutLeakError, match=p.heldout[0].replace("/", ".")):
        p.check_fit([p.training[0], p.heldout[0]], "fitting the learned forecaster")


def test_inner_cv_chooses_on_training_problems_and_says_why():
    p = load_protocol()
    bias = {"small": 0.1, "large": 0.3}

    def score(variant, train, val):
        assert not set(train) & set(val) and not set(train + val) & set(p.heldout)
        return bias[variant] - 0.01 * len(val)

    choice = inner_cv_choose({"small": "small", "large": "large"}, p.training, score, p, folds=4)
    assert choice.chosen == "large" and "large" in choice.reason and "small" in choice.reason
    assert len(choice.fold_scores["large"]) == 4 and sorted(x for f in choice.folds for x in f) == sorted(p.training)
    assert choice == inner_cv_choose({"small": "small", "large": "large"}, p.training, score, p, folds=4)
    low = inner_cv_choose({"small": "small", "large": "large"}, p.training, score, p, folds=4,
                          higher_is_better=False)
    assert low.chosen == "small"
    with pytest.raises(HeldOutLeakError):
        inner_cv_choose({"a": 1}, list(p.training) + [p.heldout[0]], score, p)


class _Fits:
    def __init__(self):
        self.seen = None

    def fit(self, problems, candidates, measurements):
        self.seen = {m.problem_id for m in measurements}
        return self

    def name(self):
        return "inner"


def test_guarded_forecaster_refuses_held_out_rows():
    data = make_synthetic(n_problems=10, per_problem=4, gpus=("h100",), seed=1)
    p = load_protocol()
    p = p.__class__(p.training, tuple(pr.id for pr in data.problems[:8]), p.tie_rel, p.path, p.sha256)
    inner = _Fits()
    g = guard_forecaster(inner, p)
    with pytest.raises(HeldOutLeakError):
        g.fit(data.problems, data.candidates, data.measurements)
    assert inner.seen is None  # refused before fitting
    train = p.training_only(tuple(data))
    assert g is inner and g.fit(train.problems, train.candidates, train.measurements) is inner
    assert inner.seen == {"L9/syn_008", "L9/syn_009"} and g.name() == "inner"


@pytest.fixture(scope="module")
def synthetic_shipped(tmp_path_factory):
    d = tmp_path_factory.mktemp("protocol_shipped")
    write_shipped(tuple(make_synthetic(n_problems=12, per_problem=12, gpus=("h100",), seed=4)), d)
    return d


def test_forecast_bench_protocol_mode_scores_held_out_only(synthetic_shipped, tmp_path):
    bench = load_bench("forecast_bench")
    proto = _protocol_file(tmp_path, [f"L9/syn_{i:03d}" for i in range(8, 12)], [f"L9/syn_{i:03d}" for i in range(8)])
    out = tmp_path / "forecast-heldout-h100.json"
    assert bench.main(["--data", str(synthetic_shipped), "--protocol", str(proto), "--max-iter", "20",
                       "--bootstrap", "50", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "forecast-heldout" and doc["heldout_scored"] == [f"L9/syn_{i:03d}" for i in range(8)]
    assert doc["protocol"]["sha256"] and {"learned", "random", "climatology"} <= set(doc["metrics"])


def test_forecast_bench_refuses_a_leaking_fit(synthetic_shipped, tmp_path, monkeypatch):
    """If the evaluation fitted on every row (a bug that leaks), the script fails instead of scoring."""
    bench = load_bench("forecast_bench")
    import workbench.evaluate.controls as controls

    real = controls.evaluate

    def leaky(make, problems, candidates, measurements, **kw):
        kw.pop("test_problems", None)
        return real(make, problems, candidates, measurements, split="none", **kw)

    monkeypatch.setattr(controls, "evaluate", leaky)
    proto = _protocol_file(tmp_path, ["L9/syn_011"], [f"L9/syn_{i:03d}" for i in range(8)])
    with pytest.raises(HeldOutLeakError, match="fitting the learned forecaster"):
        bench.run_heldout(synthetic_shipped, "h100", tmp_path / "x.json", proto, max_iter=10, n_boot=10)


def test_search_control_protocol_factory_hides_held_out_rows():
    control = load_bench("search_control")
    data = make_synthetic(n_problems=10, per_problem=4, gpus=("h100",), seed=2)
    p = load_protocol()
    p = p.__class__(("L9/syn_009",), tuple(pr.id for pr in data.problems[:9]), p.tie_rel, p.path, p.sha256)
    seen = {}

    def factory(records, searched):
        seen["problems"] = {m.problem_id for m in records.measurements}
        return _Fits()

    fc = control.protocol_factory(factory, p)(tuple(data), "L9/syn_000")
    assert seen["problems"] == {"L9/syn_009"}
    with pytest.raises(HeldOutLeakError):
        fc.fit(data.problems, data.candidates, data.measurements)
