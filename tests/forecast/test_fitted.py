"""The on-disk cache of fitted forecasters (workbench.forecast.fitted), in tmp_path only."""
from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

from workbench.evaluate.synthetic import SYNTHETIC_HARDWARE, make_synthetic
from workbench.forecast import fitted
from workbench.forecast.fitted import FitCache, FitCacheWarning, fit_or_load, training_digest
from workbench.forecast.learned import LearnedForecaster

H100 = SYNTHETIC_HARDWARE["h100"]


@pytest.fixture(scope="module")
def data():
    d = make_synthetic(n_problems=8, per_problem=20, seed=3)
    return d.problems, d.candidates, d.measurements


class CountingFitter:
    """Stands in for a fit so the cache logic is tested without training a model: counts calls
    and returns a picklable object recording what it was fitted on."""

    def __init__(self):
        self.calls = 0

    def __call__(self, problems, candidates, measurements):
        self.calls += 1
        return {"fit": self.calls, "rows": len(measurements)}


def test_second_fit_of_the_same_data_is_a_hit(tmp_path, data):
    fitter, said = CountingFitter(), []
    first = fit_or_load(*data, hardware_key="h100", settings={"seed": 0}, cache_dir=tmp_path,
                        fitter=fitter, kind="fake", progress=said.append)
    second = fit_or_load(*data, hardware_key="h100", settings={"seed": 0}, cache_dir=tmp_path,
                         fitter=fitter, kind="fake", progress=said.append)
    assert fitter.calls == 1 and first == second == {"fit": 1, "rows": len(data[2])}
    assert said[0].startswith(f"fitting fake forecaster on {len(data[2])} rows (H100)...")
    assert "done in" in said[1] and said[2].startswith("loaded cached fake forecaster")
    assert len(FitCache(tmp_path).entries()) == 1


def test_changed_rows_settings_or_hardware_miss(tmp_path, data):
    problems, candidates, ms = data
    fitter = CountingFitter()

    def go(ms_, settings=None, hw="h100"):
        return fit_or_load(problems, candidates, ms_, hardware_key=hw, settings=settings or {"seed": 0},
                           cache_dir=tmp_path, fitter=fitter, kind="fake")

    go(ms)
    go(ms[:-1])                                   # one measurement fewer
    changed = list(ms)
    i = next(j for j, m in enumerate(ms) if m.ok)
    changed[i] = ms[i].replace(speedup=ms[i].speedup * 1.5)  # one speedup changed
    go(changed)
    go(ms, settings={"seed": 1})                  # other settings
    go(ms, hw="h200")                             # other hardware key
    assert fitter.calls == 5
    go(ms)                                        # the first one again: a hit
    assert fitter.calls == 5


def test_digest_ignores_unjoined_rows_and_sees_candidate_source(data):
    problems, candidates, ms = data
    d, n = training_digest(problems, candidates, ms)
    assert n == len(ms)
    orphan = ms[0].replace(candidate_id="no-such-candidate")
    assert training_digest(problems, candidates, [*ms, orphan]) == (d, n)
    edited = [c.replace(source=c.source + "\n# edited") if c.id == ms[0].candidate_id else c
              for c in candidates]
    assert training_digest(problems, edited, ms)[0] != d


@pytest.mark.parametrize("damage", ["truncate", "garbage", "other_key"])
def test_a_corrupt_entry_is_refitted_with_a_warning(tmp_path, data, damage):
    fitter = CountingFitter()
    kw = dict(hardware_key="h100", settings={}, cache_dir=tmp_path, fitter=fitter, kind="fake")
    fit_or_load(*data, **kw)
    (entry,) = FitCache(tmp_path).entries()
    raw = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(raw[: len(raw) // 2])
    elif damage == "garbage":
        entry.write_bytes(b"not a pickle at all")
    else:  # a valid pickle stored under the wrong name
        entry.write_bytes(pickle.dumps({"format": fitted.ENTRY_FORMAT, "key": "x" * 32, "model": 1}))
    said = []
    with pytest.warns(FitCacheWarning, match="unreadable"):
        model = fit_or_load(*data, progress=said.append, **kw)
    assert fitter.calls == 2 and model == {"fit": 2, "rows": len(data[2])}
    assert any(s.startswith("warning:") for s in said)
    assert fit_or_load(*data, **kw) == model and fitter.calls == 2  # the rewritten entry is good


def test_a_failed_write_leaves_no_entry(tmp_path, data, monkeypatch):
    def crash(*a, **k):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(fitted.os, "replace", crash)
    said = []
    fit_or_load(*data, cache_dir=tmp_path, fitter=CountingFitter(), kind="fake", progress=said.append)
    folder = fitted.cache_dir(tmp_path)
    assert list(folder.iterdir()) == []  # neither a final entry nor a temporary file
    assert any("could not write" in s and fitted.ENV_CACHE_DIR in s for s in said)


def test_cache_dir_resolution(tmp_path, monkeypatch):
    monkeypatch.setenv(fitted.ENV_CACHE_DIR, str(tmp_path / "env"))
    assert fitted.cache_dir() == tmp_path / "env" / "fitted"
    assert fitted.cache_dir(tmp_path / "arg") == tmp_path / "arg" / "fitted"
    monkeypatch.delenv(fitted.ENV_CACHE_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert fitted.cache_dir() == tmp_path / "xdg" / fitted.APP_DIR / "fitted"


def test_least_recently_used_entries_are_trimmed(tmp_path):
    cache = FitCache(tmp_path, max_entries=2)
    for i, key in enumerate(("a" * 32, "b" * 32, "c" * 32)):
        cache.put(key, i)
        os.utime(cache.path_of(key), (1000 + i, 1000 + i))
    cache.put("d" * 32, 3)
    assert [p.stem for p in cache.entries()] == ["c" * 32, "d" * 32]


def test_real_learned_forecaster_round_trip(tmp_path, data, monkeypatch):
    problems, candidates, ms = data
    settings = {"max_iter": 20, "seed": 0, "calibration_folds": 3}
    fitted_now = fit_or_load(problems, candidates, ms, hardware_key="h100", settings=settings,
                             cache_dir=tmp_path)
    calls = []
    monkeypatch.setattr(fitted, "_learned_fitter", lambda s: lambda *a: calls.append(a))
    loaded = fit_or_load(problems, candidates, ms, hardware_key="h100", settings=settings,
                         cache_dir=tmp_path)
    assert calls == [] and loaded is not fitted_now and isinstance(loaded, LearnedForecaster)
    P, C = {p.id: p for p in problems}, {c.id: c for c in candidates}
    items = [(P[m.problem_id], C[m.candidate_id]) for m in ms[:25]]
    a = np.array([f.probabilities for f in fitted_now.forecast_batch(items, H100)])
    b = np.array([f.probabilities for f in loaded.forecast_batch(items, H100)])
    np.testing.assert_array_equal(a, b)
    assert loaded.reference_ms_ == fitted_now.reference_ms_


def test_row_order_does_not_matter(tmp_path, data):
    problems, candidates, ms = data
    fitter = CountingFitter()
    fit_or_load(problems, candidates, ms, cache_dir=tmp_path, fitter=fitter, kind="fake")
    fit_or_load(problems, candidates, ms[::-1], cache_dir=tmp_path, fitter=fitter, kind="fake")
    assert fitter.calls == 1


def test_learned_settings_fill_defaults_and_refuse_unknown_names():
    from workbench.errors import ConfigError

    full = fitted.learned_settings({})
    assert full == fitted.learned_settings({"reference_time": full["reference_time"]})
    assert fitted.learned_settings({"seed": 3})["seed"] == 3
    with pytest.raises(ConfigError, match="max_depth"):
        fitted.learned_settings({"max_depth": 3})


def test_cached_learned_in_evaluate_fits_each_fold_once(tmp_path, data):
    """`evaluate` scores what `fit` returns; with CachedLearned a second evaluation of the same
    folds loads every fold's model (nothing refitted) and scores the same forecasts."""
    from workbench.errors import ConfigError
    from workbench.evaluate import evaluate
    from workbench.forecast.fitted import CachedLearned

    problems, candidates, ms = data
    gpu = ms[0].hardware_key
    said: list[str] = []
    settings = {"max_iter": 20, "seed": 0, "calibration_folds": 3}

    def make():
        return CachedLearned(settings, hardware_key=gpu, cache_dir=tmp_path, progress=said.append)

    first = evaluate(make, problems, candidates, ms, gpu=gpu, folds=3, seed=0)
    fits = [x for x in said if x.startswith("fitting learned") and "done in" in x]
    assert len(fits) == 3 and not any(x.startswith("loaded") for x in said)
    said.clear()
    second = evaluate(make, problems, candidates, ms, gpu=gpu, folds=3, seed=0)
    assert not any(x.startswith("fitting") for x in said)
    assert sum(x.startswith("loaded cached learned forecaster") for x in said) == 3
    assert first.forecaster == second.forecaster == "learned"
    np.testing.assert_array_equal(first.probabilities, second.probabilities)
    with pytest.raises(ConfigError, match="forecasts nothing itself"):
        make().forecast(problems[0], candidates[0], H100)
    with pytest.raises(ConfigError, match="unknown learned forecaster settings"):
        CachedLearned({"depth": 3})


_RACER = """
import sys, time
from pathlib import Path
from workbench.evaluate.synthetic import make_synthetic
from workbench.forecast.fitted import fit_or_load

calls = Path(sys.argv[2])


def slow_fit(problems, candidates, measurements):
    with open(calls, "a") as f:
        f.write("fit\\n")
    time.sleep(3.0)
    return {"rows": len(measurements)}


d = make_synthetic(n_problems=8, per_problem=20, seed=3)
said = []
model = fit_or_load(d.problems, d.candidates, d.measurements, hardware_key="h100", settings={"seed": 0},
                    cache_dir=sys.argv[1], fitter=slow_fit, kind="fake", progress=said.append)
print(repr(model))
print("|".join(said))
"""


def test_two_processes_wanting_the_same_fit_fit_it_once(tmp_path):
    """Started together, one fits; the other waits on the entry's lock and loads what it stored."""
    import subprocess
    import sys

    calls = tmp_path / "calls.txt"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(fitted.Path(__file__).parents[2]),
                                                                     os.environ.get("PYTHONPATH")])))
    procs = [subprocess.Popen([sys.executable, "-c", _RACER, str(tmp_path / "cache"), str(calls)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e[-2000:] for _, e in outs]
    assert calls.read_text().splitlines() == ["fit"]
    models = {o.splitlines()[0] for o, _ in outs}
    assert len(models) == 1
    said = " ".join(o.splitlines()[1] for o, _ in outs)
    assert "waiting for another process fitting the same fake forecaster" in said
    assert "by another process" in said
