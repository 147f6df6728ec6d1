"""benchmarks/rl_experiment.py: the results file is written after each phase and a stopped run
resumes where it stopped. The model, training and scoring are replaced by recorders here (the
real ones run in test_train.py and in the experiment itself); what is tested is the bookkeeping
over the results JSON, never a measurement. Nothing is written to benchmarks/results.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench_scripts import load_bench

pytest.importorskip("datasets", reason="datasets is not installed (the `dev` extra)")

from workbench.errors import ConfigError  # noqa: E402

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "rl_experiment.py"
bench = load_bench("rl_experiment", _PATH)

KEYS = list(bench.METRICS) + ["parse_rate"]


def _metrics(value: float) -> dict[str, float]:
    return {k: value for k in KEYS}


def test_metric_row_pairs_before_and_after():
    row = bench.metric_row(_metrics(0.25), _metrics(0.5))
    assert set(row) == {f"{k}_{w}" for k in KEYS for w in ("before", "after")}
    assert row["ece_before"] == 0.25 and row["ece_after"] == 0.5


def test_resume_state_reuses_before_and_finished_rewards():
    settings, data_info = {"steps": 2, "seed": 0}, {"eval_rows": 8, "fingerprint": "ab"}
    assert bench.resume_state(None, settings, data_info, "m") == (None, {})
    prev = {"settings": settings, "data": data_info, "model": "m", "before": _metrics(0.1),
            "metrics": {"correctness": bench.metric_row(_metrics(0.1), _metrics(0.2))}}
    before, done = bench.resume_state(prev, settings, data_info, "m")
    assert before == _metrics(0.1) and list(done) == ["correctness"]
    # A file from before the top-level "before" key: taken from a finished row; null -> NaN.
    del prev["before"]
    prev["metrics"]["correctness"]["spearman_before"] = None
    before, _ = bench.resume_state(prev, settings, data_info, "m")
    assert before["ece"] == 0.1 and math.isnan(before["spearman"]) and set(before) == set(KEYS)


@pytest.mark.parametrize("field, change", [("settings", {"steps": 3, "seed": 0}),
                                           ("data", {"eval_rows": 8, "fingerprint": "cd"}),
                                           ("model", "other")])
def test_resume_refuses_a_file_of_other_settings_or_data(field, change):
    settings, data_info = {"steps": 2, "seed": 0}, {"eval_rows": 8, "fingerprint": "ab"}
    prev = {"settings": settings, "data": data_info, "model": "m", "before": _metrics(0.1),
            "metrics": {}}
    prev[field] = change
    with pytest.raises(ConfigError, match=f"differs from this run in {field}"):
        bench.resume_state(prev, settings, data_info, "m")


def test_fingerprint_depends_on_rows_and_order():
    a = bench.fingerprint(["p/1", "p/2"], ["q/3"])
    assert a == bench.fingerprint(["p/1", "p/2"], ["q/3"])
    assert a != bench.fingerprint(["p/2", "p/1"], ["q/3"])
    assert a != bench.fingerprint(["p/1"], ["p/2", "q/3"])


class Recorder:
    """Stands in for the model, GRPO and scoring; records what the script asked for."""

    def __init__(self, stop_at: str | None = None):
        self.stop_at = stop_at
        self.trained: list[str] = []
        self.evaluated: list[str] = []

    def load_model(self, model, gguf_file, device):
        return SimpleNamespace(name="base"), SimpleNamespace(name="tok")

    def train(self, cfg, ds, model=None, tokenizer=None):
        if cfg.reward == self.stop_at:
            raise KeyboardInterrupt  # the time limit strikes while this reward trains
        self.trained.append(cfg.reward)
        log = [{"reward": 0.0, "frac_groups_dropped": 1.0, "completions/clipped_ratio": 1.0}]
        return SimpleNamespace(model=SimpleNamespace(name=cfg.reward), log_history=log)

    def evaluate_model(self, model, tok, rows, args, name):
        self.evaluated.append(name)
        return _metrics(0.5 if name == "base" else 0.75)


def _run(monkeypatch, rec: Recorder, out: Path, *extra: str) -> int:
    for name in ("load_model", "train", "evaluate_model"):
        monkeypatch.setattr(bench, name, getattr(rec, name))
    return bench.main(["--steps", "1", "--prompts-per-step", "2", "--generations", "2",
                       "--train-rows", "4", "--eval-rows", "2", "--rewards", "correctness,brier",
                       "--model", "unused-dir", "--out", str(out), "--work", str(out.parent),
                       *extra])


@pytest.mark.timeout(300)
def test_stopped_run_keeps_finished_rewards_and_resumes(tmp_path, monkeypatch):
    out = tmp_path / "rl.json"
    first = Recorder(stop_at="brier")
    with pytest.raises(KeyboardInterrupt):
        _run(monkeypatch, first, out)
    doc = json.loads(out.read_text())
    assert first.evaluated == ["base", "grpo-correctness"] and first.trained == ["correctness"]
    assert list(doc["metrics"]) == ["correctness"]          # written after the finished reward
    assert doc["before"] == _metrics(0.5)
    assert doc["metrics"]["correctness"]["ece_after"] == 0.75
    assert set(doc["timings_s"]) >= {"load", "eval_before", "train", "eval_after"}
    kept = doc["metrics"]["correctness"]

    second = Recorder()
    assert _run(monkeypatch, second, out, "--resume") == 0
    assert second.trained == ["brier"] and second.evaluated == ["grpo-brier"]  # before reused
    doc = json.loads(out.read_text())
    assert list(doc["metrics"]) == ["correctness", "brier"]
    assert doc["metrics"]["correctness"] == kept
    assert doc["metrics"]["brier"]["ece_before"] == 0.5
    assert set(doc["timings_s"]["train"]) == {"correctness", "brier"}

    third = Recorder()  # everything done: nothing is loaded, trained or scored
    assert _run(monkeypatch, third, out, "--resume") == 0
    assert third.trained == [] and third.evaluated == []

    # Other settings: the file is not silently merged into.
    assert _run(monkeypatch, Recorder(), out, "--resume", "--seed", "1") == 1
    assert list(json.loads(out.read_text())["metrics"]) == ["correctness", "brier"]


def test_the_rl_path_imports_no_app_only_package():
    """The GPU machine that runs the experiment has torch, transformers, peft, accelerate,
    pandas, pyarrow and tqdm (trl, datasets, gguf carried along), not the app's packages."""
    import subprocess
    import sys

    app_only = ["openai", "pydantic", "httpx", "panel", "bokeh", "param", "ipywidgets",
                "matplotlib", "sqlalchemy", "llama_cpp", "ray"]
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('rl_experiment', {str(_PATH)!r})\n"
            "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
            "import workbench.forecast.local, workbench.rl.data, workbench.rl.train\n"
            "from workbench.rl.train import trainer_class\n"
            "trainer_class()\n"
            f"print(sorted(m for m in {app_only!r} if m in sys.modules))\n")
    root = _PATH.parents[1]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(root)}, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
