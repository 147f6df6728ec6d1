"""One registry: built-in, imported (database) and --problem-file problems resolve the same way
in every command that takes a problem."""
from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.errors import ProblemFileError
from workbench.problems.registry import resolve
from workbench.store import Store

CORPUS = Path(__file__).parent / "corpus"
RELU = CORPUS / "level1" / "19_ReLU.py"


@pytest.fixture
def imported(tmp_path, capsys):
    """A database with the corpus's level 1 imported (KernelBench layout)."""
    src = tmp_path / "kb"
    shutil.copytree(CORPUS / "level1", src / "level1")
    db = tmp_path / "wb.sqlite"
    assert main(["--db", str(db), "problems", "import", str(src)]) == 0
    capsys.readouterr()
    return db


def test_kernelbench_spellings_resolve(imported):
    with Store(imported) as st:
        for ref in ("L1/19_ReLU", "19_ReLU", "level1/19_ReLU.py", "kb/level1/19_ReLU", "l1/19_relu"):
            assert resolve(ref, store=st).id == "L1/19_ReLU", ref
        assert resolve("softmax", store=st).id == "L1/01_softmax"  # built-ins still resolve
        with pytest.raises(ProblemFileError, match="ambiguous"):
            resolve("ReLU", store=st)  # L1/1_ReLU, L1/19_ReLU and the built-in relu
    with pytest.raises(ProblemFileError, match="no database found"):
        resolve("19_ReLU")
    assert resolve(problem_file=RELU).id == "L1/19_ReLU"


def test_problems_list_and_show(imported, capsys):
    assert main(["--db", str(imported), "problems", "list", "--level", "1"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("L1/19_ReLU "))
    assert "derived" in line and "imported" in line
    assert "L1/01_softmax" in out  # built-in beside imported
    for argv in (["19_ReLU"], ["--problem-file", str(RELU)]):
        assert main(["--db", str(imported), "problems", "show"] + argv) == 0
        shown = capsys.readouterr().out
        assert "id:        L1/19_ReLU" in shown and "counts:    derived" in shown
        assert "GFLOP:     0.0002621" in shown  # 16 x 16384 elements, one FLOP each


def _identity(tmp_path: Path) -> Path:
    f = tmp_path / "identity.py"
    f.write_text(RELU.read_text().replace("class Model(", "class ModelNew("))
    return f


def test_forecast_accepts_imported_ids_and_files(imported, tmp_path, capsys):
    cand = _identity(tmp_path)
    outs = []
    for argv in (["L1/19_ReLU", str(cand)], ["--problem-file", str(RELU), str(cand)]):
        assert main(["--db", str(imported), "forecast"] + argv + ["--forecaster", "roofline", "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0]["problem_id"] == outs[1]["problem_id"] == "L1/19_ReLU"
    assert outs[0]["probabilities"] == outs[1]["probabilities"]
    assert main(["forecast", str(cand), "--forecaster", "roofline"]) == 1
    assert "--problem-file" in capsys.readouterr().err


def test_measure_accepts_imported_ids_and_files(imported, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    cand = tmp_path / "relu_new.py"
    cand.write_text("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
                    "    def forward(self, x):\n        return torch.clamp_min(x, 0.0)\n")
    for argv in (["19_ReLU", str(cand)], ["--problem-file", str(RELU), str(cand)]):
        main(["--db", str(imported), "measure"] + argv + ["--gpu", "cpu", "--timeout", "120"])
        out = capsys.readouterr().out
        assert "problem:    L1/19_ReLU" in out and "status:" in out, out


@pytest.mark.slow  # two CPU searches of budget 1 (sandboxed Triton interpreter runs)
def test_search_accepts_imported_ids_and_files(imported, capsys, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    # A problem nobody wrote zoo kernels for: seeds come from lowering its reference.
    for argv in (["--problem", "L1/19_ReLU"], ["--problem-file", str(RELU)]):
        rc = main(["--db", str(imported), "search"] + argv + ["--gpu", "cpu", "--forecaster", "roofline",
                                                               "--budget", "1", "--no-progress"])
        out = capsys.readouterr()
        assert rc == 0, out.err
        assert "GPU measurements used:   1 / 1" in out.out and "none correct" not in out.out
    with Store(imported) as st:
        assert st.get_problem("L1/19_ReLU").count_source == "derived"
        assert any(c.origin.startswith("lowering:") for c in st.candidates(problem_id="L1/19_ReLU"))


def test_evaluate_scores_one_problem_by_id_or_file(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("_search_conftest",
                                                  Path(__file__).parents[1] / "search" / "conftest.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    db = mod.synthetic_db(tmp_path)

    f = tmp_path / "mine" / "level1" / "90_synth_a.py"
    f.parent.mkdir(parents=True)
    f.write_text(RELU.read_text())
    for argv in (["--problem", "90_synth_a"], ["--problem-file", str(f)]):
        assert main(["--db", str(db), "evaluate", "--forecaster", "climatology", "--gpu", "h100",
                     "--bootstrap", "0", "--folds", "2", "--out", str(tmp_path / "ev")] + argv) == 0
        import pandas as pd

        scored = pd.read_parquet(tmp_path / "ev" / "forecasts.parquet")
        assert set(scored["problem_id"]) == {"L1/90_synth_a"}, set(scored["problem_id"])
        capsys.readouterr()
    assert main(["--db", str(db), "evaluate", "--gpu", "h100", "--problem-file", str(RELU)]) == 1
    assert "no measurements of L1/19_ReLU" in capsys.readouterr().err
