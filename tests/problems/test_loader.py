"""Loading problem directories in the KernelBench layout; bad files give clear errors."""
from __future__ import annotations

import pytest

from workbench.cli import main
from workbench.errors import ProblemFileError
from workbench.problems import get_problem, load_dir, load_file, load_source

GOOD = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2

def get_inputs():
    return [torch.randn(4, 4)]

def get_init_inputs():
    return []
"""


@pytest.fixture
def kb_dir(tmp_path):
    (tmp_path / "level1").mkdir()
    (tmp_path / "level2").mkdir()
    (tmp_path / "level1" / "1_Double.py").write_text(GOOD)
    (tmp_path / "level1" / "2_NoInputs.py").write_text(GOOD.replace("def get_inputs", "def other"))
    (tmp_path / "level2" / "3_Broken.py").write_text("class Model(:\n")
    (tmp_path / "level2" / "4_Raises.py").write_text(GOOD + "\nraise RuntimeError('boom')\n")
    (tmp_path / "level2" / "5_Good.py").write_text(GOOD)
    return tmp_path


def test_one_bad_file_never_stops_the_others(kb_dir):
    problems, errors = load_dir(kb_dir)
    assert [p.id for p in problems] == ["L1/1_Double", "L2/5_Good"]
    assert len(errors) == 3
    text = "\n".join(map(str, errors))
    assert "2_NoInputs.py: missing get_inputs" in text
    assert "3_Broken.py: syntax error at line 1" in text


def test_execution_errors_name_the_file(kb_dir):
    p = load_file(kb_dir / "level2" / "5_Good.py")
    assert p.level == 2 and p.flops == 0.0  # external files need no metadata
    with pytest.raises(ProblemFileError, match="4_Raises.*boom"):
        load_source((kb_dir / "level2" / "4_Raises.py").read_text(), name=str(kb_dir / "level2" / "4_Raises.py"))


def test_not_a_kernelbench_dir(tmp_path):
    with pytest.raises(ProblemFileError, match="no levelN"):
        load_dir(tmp_path)
    with pytest.raises(ProblemFileError, match="not a directory"):
        load_dir(tmp_path / "missing")


def test_size_overrides():
    p = get_problem("L1/01_softmax")
    lp = load_source(p.source, name=p.id, sizes={"M": 3, "N": 5})
    assert lp.get_inputs()[0].shape == (3, 5)
    with pytest.raises(ProblemFileError, match="not a global"):
        load_source(p.source, name=p.id, sizes={"Q": 1})


def test_get_problem_by_id_or_name():
    assert get_problem("softmax").id == "L1/01_softmax"
    assert get_problem("01_softmax").id == "L1/01_softmax"
    with pytest.raises(ProblemFileError, match="problems list"):
        get_problem("no_such_problem")


def test_cli_list_show_import(kb_dir, tmp_path, capsys):
    assert main(["problems", "list"]) == 0
    out = capsys.readouterr().out
    assert "L3/" in out and "problems over levels 1, 2, 3" in out
    assert main(["problems", "show", "softmax"]) == 0
    assert "class Model" in capsys.readouterr().out
    db = tmp_path / "db.sqlite"
    assert main(["--db", str(db), "problems", "import", str(kb_dir)]) == 0
    cap = capsys.readouterr()
    assert "imported 2 problems" in cap.out and "skipped" in cap.err
    from workbench.store import Store
    assert {p.id for p in Store(db).problems()} == {"L1/1_Double", "L2/5_Good"}


def test_cli_help_explains_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "problems" in out and "db" in out
