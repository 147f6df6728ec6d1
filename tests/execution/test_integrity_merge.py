"""benchmarks/integrity_bench.py --merge: parts of one commit make one results file."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("integrity_bench_under_test", ROOT / "benchmarks" / "integrity_bench.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _part(d: Path, name: str, commit: str, metrics: dict, hardware: dict | None = None) -> None:
    d.mkdir(parents=True, exist_ok=True)
    obj = {"part": name, "commit": commit, "date": "2026-11-29T12:00:00Z", "metrics": metrics}
    if hardware:
        obj["hardware"] = hardware
    (d / f"integrity-{name}.json").write_text(json.dumps(obj))


HW = {"name": "NVIDIA H200", "key": "h200"}


def test_parts_of_one_commit_merge_and_honest_counts_add_up(tmp_path):
    bench = _bench()
    _part(tmp_path / "c1", "probes", "abc", {"probes_total": 78, "forged_accepted": 0}, HW)
    _part(tmp_path / "c1", "zoo-0of2", "abc", {"honest_total": 10, "honest_flagged": 0})
    _part(tmp_path / "c2", "zoo-1of2", "abc", {"honest_total": 12, "honest_flagged": 1})
    out = bench.merge([tmp_path / "c1", tmp_path / "c2"], tmp_path / "results")
    doc = json.loads(out.read_text())
    assert out.name == "integrity-h200.json" and doc["commit"] == "abc"
    assert doc["metrics"]["honest_total"] == 22 and doc["metrics"]["honest_flagged"] == 1
    assert doc["metrics"]["probes_total"] == 78


def test_parts_of_two_commits_are_refused(tmp_path):
    bench = _bench()
    _part(tmp_path / "c1", "probes", "abc", {"probes_total": 78}, HW)
    _part(tmp_path / "c2", "zoo-0of1", "def", {"honest_total": 10, "honest_flagged": 0})
    with pytest.raises(SystemExit, match="2 commits"):
        bench.merge([tmp_path / "c1", tmp_path / "c2"], tmp_path / "results")
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").iterdir())


def test_the_committed_h200_result_is_the_merge_of_its_committed_raw_outputs(tmp_path):
    """The shipped integrity-h200.json is what --merge makes of the raw outputs committed under
    benchmarks/device/runs/ for its commit, and it meets the judge's targets."""
    shipped = json.loads((ROOT / "benchmarks" / "results" / "integrity-h200.json").read_text())
    runs = [p for p in (ROOT / "benchmarks" / "device" / "runs").glob("*/*")
            if p.is_dir() and shipped["commit"].startswith(p.name)]
    assert len(runs) == 1, f"raw outputs of {shipped['commit'][:10]} not found once under benchmarks/device/runs/"
    remade = json.loads(_bench().merge([runs[0]], tmp_path).read_text())
    assert remade["commit"] == shipped["commit"] and remade["metrics"] == shipped["metrics"]
    m = shipped["metrics"]
    assert m["probes_total"] >= 75 and m["probes_caught_or_contained"] == m["probes_total"]
    assert m["forged_accepted"] == 0 and m["secrets_leaked"] == 0
    from workbench.zoo import zoo_kernels
    bench = _bench()
    assert m["honest_total"] == len(zoo_kernels()) + bench.LANDSCAPE_POINTS and m["honest_flagged"] == 0
    assert m["throughput_ratio"] >= 0.8
