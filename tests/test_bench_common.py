"""benchmarks/_common: the commit a result names (and when it does not match the tree), and where a
results file is written."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench_scripts import load_bench

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "_common.py"
common = load_bench("bench_common", _PATH)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.delenv("WORKBENCH_COMMIT", raising=False)
    (tmp_path / "workbench").mkdir()
    (tmp_path / "workbench" / "a.py").write_text("x = 1\n")
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results" / "r.json").write_text("{}\n")
    (tmp_path / "kernels_cache").mkdir()
    (tmp_path / "kernels_cache" / "rows.jsonl").write_text("{}\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "one")
    return tmp_path


def test_clean_tree_names_head(repo):
    assert common.commit(repo) == _git(repo, "rev-parse", "HEAD")


def test_edited_code_is_marked(repo):
    (repo / "workbench" / "a.py").write_text("x = 2\n")
    head = _git(repo, "rev-parse", "HEAD")
    assert common.commit(repo) == head + common.DIRTY


def test_results_data_and_untracked_files_do_not_mark(repo):
    (repo / "benchmarks" / "results" / "r.json").write_text('{"a": 1}\n')
    (repo / "kernels_cache" / "rows.jsonl").write_text('{"b": 2}\n')
    (repo / "workbench" / "new.py").write_text("y = 1\n")
    assert common.commit(repo) == _git(repo, "rev-parse", "HEAD")


def test_environment_wins(repo, monkeypatch):
    monkeypatch.setenv("WORKBENCH_COMMIT", "0" * 40)
    (repo / "workbench" / "a.py").write_text("x = 3\n")
    assert common.commit(repo) == "0" * 40


def test_no_history(tmp_path, monkeypatch):
    monkeypatch.delenv("WORKBENCH_COMMIT", raising=False)
    assert common.commit(tmp_path).startswith("unknown")


def test_write_results_keeps_partial_runs_out_of_results(tmp_path, capsys):
    results, out = tmp_path / "results", tmp_path / "out"
    assert common.write_results(results, "r.json", "{}", False, None, "partial: nowhere") == []
    assert "partial: nowhere" in capsys.readouterr().err and not results.exists()
    assert common.write_results(results, "r.json", "{1}", False, str(out), "p") == [out / "r.json"]
    assert not results.exists() and (out / "r.json").read_text() == "{1}"
    written = common.write_results(results, "r.json", "{2}", True, str(out), "p")
    assert written == [results / "r.json", out / "r.json"]
    assert all(p.read_text() == "{2}" for p in written)
    assert capsys.readouterr().err == ""


class _M:
    """A measurement's two faces the wait loop uses: its candidate id and its dict."""

    def __init__(self, cid: str):
        self.candidate_id = cid

    def to_dict(self) -> dict:
        return {"candidate_id": self.candidate_id}


def test_wait_measurements_writes_each_as_it_finishes_and_stops_at_the_deadline(tmp_path):
    import json
    import time
    from concurrent.futures import Future

    done_f, cancelled, never = Future(), Future(), Future()
    done_f.set_result(_M("a"))
    cancelled.cancel()
    path = tmp_path / "m.jsonl"
    path.write_text('{"candidate_id": "old"}\n')
    heard = []
    t0 = time.monotonic()
    got, seconds, cut = common.wait_measurements([done_f, cancelled, never], time.time() + 0.3, path, t0,
                                                 progress=lambda n, new, s: heard.append((n, new)))
    assert list(got) == ["a"] and cut and 0 <= seconds < 0.3
    assert [json.loads(x)["candidate_id"] for x in path.read_text().splitlines()] == ["old", "a"]  # appended
    assert heard and heard[0][0] == 1
    got, _, cut = common.wait_measurements([done_f], time.time() + 5, path, time.monotonic(), mode="w")
    assert list(got) == ["a"] and not cut and path.read_text().splitlines() == ['{"candidate_id": "a"}']
