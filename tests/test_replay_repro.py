"""benchmarks/replay_repro.py: the run-by-run comparison, the data read from a commit, refusals,
and that the committed reproduction names the committed search result it reproduced."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import replay_repro  # noqa: E402

from workbench.errors import ConfigError  # noqa: E402


def run(pid="P1", method="measure_all", seed=0, best=1.5, **extra):
    return {"problem_id": pid, "method": method, "seed": seed, "best_speedup": best,
            "curve": [[1, 0.5], [3, best]], **extra}


def test_equal_runs_reproduce():
    recorded = [run(seed=0), run(seed=1, best=2.0)]
    replayed = [run(seed=1, best=2.0), run(seed=0)]
    out = replay_repro.compare_runs(recorded, replayed, ["P1"])
    assert out["reproduces"] and out["runs_equal"] == 2 and out["runs_differing"] == 0


def test_a_float_one_ulp_off_is_a_difference():
    out = replay_repro.compare_runs([run(best=1.0)], [run(best=1.0000000000000002)], ["P1"])
    assert not out["reproduces"]
    # scalar fields carry [recorded, replayed]; lists are only named
    assert out["differences"] == [{"run": ["P1", "measure_all", 0], "fields": ["best_speedup", "curve"],
                                   "values": {"best_speedup": [1.0, 1.0000000000000002]}}]


def test_tuples_compare_like_the_recorded_lists():
    replayed = [dict(run(), curve=[(1, 0.5), (3, 1.5)])]
    assert replay_repro.compare_runs([run()], replayed, ["P1"])["reproduces"]


def test_missing_and_unrecorded_runs_fail():
    recorded = [run(seed=0), run(seed=1), run(pid="P2")]
    out = replay_repro.compare_runs(recorded, [run(seed=0)], ["P1"])
    assert out["missing"] == 1 and out["missing_runs"] == [["P1", "measure_all", 1]]
    assert not out["reproduces"] and out["runs_recorded"] == 2  # P2 was not run: not counted
    extra = replay_repro.compare_runs([run(seed=0)], [run(seed=0), run(seed=7)], ["P1"])
    assert not extra["reproduces"] and extra["differences"][0]["fields"] == ["<not recorded>"]


def test_fields_on_one_side_are_named_not_compared():
    out = replay_repro.compare_runs([run(old_field=3)], [run(new_field=4)], ["P1"])
    assert out["reproduces"]
    assert out["fields_only_recorded"] == ["old_field"] and out["fields_only_replayed"] == ["new_field"]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                          check=True, capture_output=True, text=True).stdout.strip()


def test_shipped_data_comes_from_the_commit_not_the_tree(tmp_path):
    repo = tmp_path / "repo"
    shipped = repo / "kernels_cache" / "shipped"
    shipped.mkdir(parents=True)
    _git(repo, "init", "-q")
    (shipped / "kernels.parquet").write_bytes(b"old rows")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    first = _git(repo, "rev-parse", "HEAD")
    (shipped / "kernels.parquet").write_bytes(b"new rows")
    (shipped / "more.jsonl").write_text("{}\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "two")
    out = replay_repro.shipped_at(first, tmp_path / "data", root=repo)
    assert sorted(p.name for p in out.iterdir()) == ["kernels.parquet"]
    assert (out / "kernels.parquet").read_bytes() == b"old rows"
    with pytest.raises(ConfigError, match="not in this clone's history"):
        replay_repro.shipped_at("0" * 40, tmp_path / "none", root=repo)


def test_a_file_without_replay_runs_is_refused(tmp_path, capsys):
    path = tmp_path / "search-h100.json"
    path.write_text(json.dumps({"benchmark": "search", "setup": {"problems": ["P1"]}}))
    assert replay_repro.main(["--results", str(path), "--out", str(tmp_path)]) == 2
    assert "records no replay runs" in capsys.readouterr().err
    path.write_text(json.dumps({"commit": "abc", "setup": {"problems": ["P1"]},
                                "replay_runs": [run(method="simulated_annealing")]}))
    assert replay_repro.main(["--results", str(path), "--out", str(tmp_path)]) == 2
    assert "not replay methods" in capsys.readouterr().err
    path.write_text(json.dumps({"commit": "abc", "setup": {"problems": ["P1"]}, "replay_runs": [run()]}))
    assert replay_repro.main(["--results", str(path), "--problems", "P9", "--out", str(tmp_path)]) == 2
    assert "['P9'] are not among the recorded problems" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["replay-repro-h100.json", "replay-repro-conformal-starts1-h100.json"])
def test_committed_reproduction_covers_the_committed_search_result(name):
    """Each committed reproduction was made against today's committed search result, over all
    of its runs, and its counts add up (whether it reproduces is its finding, not asserted)."""
    doc = json.loads((ROOT / "benchmarks" / "results" / name).read_text())
    assert doc["benchmark"] == name.removesuffix("-h100.json")
    assert doc["setup"].get("conformal_starts") == (1 if "starts1" in name else None)
    search = json.loads((ROOT / doc["setup"]["results_file"]).read_text())
    m = doc["metrics"]
    assert doc["setup"]["recorded_commit"] == search["commit"]
    assert doc["setup"]["problems"] == len(search["setup"]["problems"])
    assert m["runs_recorded"] == m["runs_replayed"] == len(search["replay_runs"])
    assert m["runs_equal"] + m["runs_differing"] == m["runs_replayed"]
    assert m["reproduces"] == (m["runs_differing"] == 0 and m["missing"] == 0)
    assert len(doc["differences"]) == min(m["runs_differing"], replay_repro.MAX_LISTED)


def test_conformal_starts_below_one_is_refused(tmp_path, capsys):
    path = tmp_path / "search-h100.json"
    path.write_text(json.dumps({"commit": "abc", "setup": {"problems": ["P1"]}, "replay_runs": [run()]}))
    assert replay_repro.main(["--results", str(path), "--conformal-starts", "0", "--out", str(tmp_path)]) == 2
    assert "--conformal-starts must be at least 1" in capsys.readouterr().err
