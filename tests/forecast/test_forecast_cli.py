"""`workbench forecast`: the printed forecast of each forecaster, caching, and clear errors.

The learned forecaster is fitted on a small slice of the real shipped H100 rows (eight
level-1 problems, written to a temporary shipped-layout directory) so the test stays fast.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench import bins
from workbench.cli import main
from workbench.dataset import DEFAULT_SHIPPED_DIR, RecordSet, load_shipped, write_shipped
from workbench.zoo import zoo_candidates, zoo_kernels

PROBLEM = "L1/01_softmax"
ZOO = Path()  # the problem's rendered zoo variants, one file each (set by _zoo_files)


@pytest.fixture(scope="module", autouse=True)
def _zoo_files(tmp_path_factory):
    """The CLI reads a candidate from a file: write the problem's zoo variants to files."""
    global ZOO
    ZOO = tmp_path_factory.mktemp("zoo")
    for k in zoo_kernels(PROBLEM):
        (ZOO / f"{k.variant}.py").write_text(k.source)


@pytest.fixture(scope="module")
def small_data(tmp_path_factory):
    if not Path(DEFAULT_SHIPPED_DIR).is_dir():
        pytest.skip("no shipped data")
    problems, candidates, measurements = load_shipped(DEFAULT_SHIPPED_DIR)
    keep = {p.id for p in problems if p.level == 1}
    keep = set(sorted(keep)[:8]) | {PROBLEM}
    ms = [m for m in measurements if m.problem_id in keep and m.hardware_key == "h100"]
    d = tmp_path_factory.mktemp("shipped")
    write_shipped(RecordSet([p for p in problems if p.id in keep], candidates, ms), d)
    return d


def _candidate(name: str = "online_loop_b1024_w4.py") -> str:
    return str(ZOO / name)


def test_learned_prints_distribution_and_p_fail(small_data, tmp_path, capsys):
    args = ["forecast", PROBLEM, _candidate(), "--forecaster", "learned", "--data", str(small_data),
            "--cache-dir", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr()
    assert "fitting learned forecaster on" in out.err and "done in" in out.err
    assert f"{PROBLEM} left out" in out.err
    text = out.out
    for label in bins.LABELS:
        assert label in text
    assert text.count("<- predicted") == 1
    assert "failure probability:" in text and "expected speedup:" in text
    assert "strongest features:" in text  # the learned forecaster's reasoning
    cached = list((tmp_path / "fitted").glob("*.joblib"))
    assert len(cached) == 1
    # Second call: loaded from the cache (no refit), same answer, JSON form.
    assert main(args + ["--json"]) == 0
    out = capsys.readouterr()
    assert "fitting" not in out.err and "loaded cached learned forecaster" in out.err
    doc = json.loads(out.out)
    assert len(doc["probabilities"]) == 8 and abs(sum(doc["probabilities"]) - 1) < 1e-9
    assert 0 < doc["p_fail"] < 1 and doc["forecaster"] == "learned"
    assert doc["predicted_bin"] == max(range(8), key=doc["probabilities"].__getitem__)
    assert f"bin {doc['predicted_bin'] + 1} " in text.split("<- predicted")[0].splitlines()[-1]


def test_roofline_against_parent(capsys):
    slow = _candidate("slow_loop_b64_w1.py")
    assert main(["forecast", "softmax", _candidate(), "--forecaster", "roofline",
                 "--hardware", "h200", "--parent", slow]) == 0
    text = capsys.readouterr().out
    assert "speedup over the parent" in text and "on h200" in text
    assert "failure probability" not in text  # the roofline gives none
    # A 64-element, 1-warp parent is slower: the child should be forecast faster than it.
    exp = float(text.split("expected speedup: ")[1].split("x")[0])
    assert exp > 1.0


def test_llm_without_server_is_a_clear_error(monkeypatch, capsys):
    for var in ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL", "WORKBENCH_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    rc = main(["forecast", PROBLEM, _candidate(), "--forecaster", "llm"])
    err = capsys.readouterr().err
    assert rc == 1 and "--llm-base-url" in err and "WORKBENCH_LLM_BASE_URL" in err
    assert "base_url=" not in err  # CLI words, not Python arguments
    rc = main(["forecast", PROBLEM, _candidate(), "--forecaster", "llm",
               "--llm-base-url", "http://127.0.0.1:9/v1"])
    err = capsys.readouterr().err
    assert rc == 1 and "--llm-model" in err and "WORKBENCH_LLM_MODEL" in err and "model=" not in err
    rc = main(["forecast", PROBLEM, _candidate(), "--forecaster", "llm",
               "--llm-base-url", "127.0.0.1:8080", "--llm-model", "m"])
    assert rc == 1 and "must start with http://" in capsys.readouterr().err


def test_bad_problem_and_files(tmp_path, capsys):
    assert main(["forecast", "L9/no_such_problem", _candidate(), "--forecaster", "roofline"]) == 1
    assert "no problem 'L9/no_such_problem'" in capsys.readouterr().err
    assert main(["forecast", PROBLEM, str(tmp_path / "missing.py"), "--forecaster", "roofline"]) == 1
    assert "does not exist" in capsys.readouterr().err
    not_candidate = tmp_path / "x.py"
    not_candidate.write_text("print('hello')\n")
    assert main(["forecast", PROBLEM, str(not_candidate), "--forecaster", "roofline"]) == 1
    assert "does not define ModelNew" in capsys.readouterr().err
    assert main(["forecast", PROBLEM, _candidate(), "--parent", str(tmp_path / "nope.py"),
                 "--forecaster", "roofline"]) == 1
    assert "parent file" in capsys.readouterr().err
    assert main(["forecast", PROBLEM, _candidate(), "--data", str(tmp_path / "nodata")]) == 1
    assert "no shipped data" in capsys.readouterr().err


def test_zoo_candidates_exist_for_the_test():
    names = {c.origin for c in zoo_candidates(PROBLEM)}
    assert {"zoo:online_loop_b1024_w4", "zoo:slow_loop_b64_w1"} <= names
