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
    assert p.level == 2 and p.count_source == "derived" and p.flops > 0  # counts traced, not declared
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


#: A problem file saved in Latin-1 (the "é" is byte 0xe9, not UTF-8).
LATIN1 = ("# r\u00e9sum\u00e9 of the problem\n" + GOOD).encode("latin-1")


def _counted(flops: str, bytes_moved: str = "return 8.0") -> str:
    return GOOD + f"\ndef flops():\n    {flops}\n\ndef bytes_moved():\n    {bytes_moved}\n"


@pytest.fixture
def hostile_dir(tmp_path):
    """One good file among files that break the smaller rules: encoding, raising and bad counts."""
    d = tmp_path / "level1"
    d.mkdir()
    (d / "1_Good.py").write_text(_counted("return 4.0"))
    (d / "2_Latin1.py").write_bytes(LATIN1)
    (d / "3_FlopsRaises.py").write_text(_counted("raise ZeroDivisionError('no size')"))
    (d / "4_BytesRaises.py").write_text(_counted("return 1.0", "raise KeyError('dtype')"))
    (d / "5_NanFlops.py").write_text(_counted("return float('nan')"))
    (d / "6_InfBytes.py").write_text(_counted("return 1.0", "return float('inf')"))
    (d / "7_Negative.py").write_text(_counted("return -5"))
    (d / "8_Text.py").write_text(_counted("return '1e9'"))
    return tmp_path


def test_import_reports_each_bad_file_by_name_and_goes_on(hostile_dir, tmp_path, capsys):
    problems, errors = load_dir(hostile_dir)
    assert [p.id for p in problems] == ["L1/1_Good"]
    assert problems[0].flops == 4.0 and problems[0].bytes_moved == 8.0
    bad = sorted(f.name for f in (hostile_dir / "level1").iterdir() if f.name != "1_Good.py")
    assert sorted(name for e in errors for name in bad if name in str(e)) == bad  # one error per file
    text = "\n".join(map(str, errors))
    assert len(errors) == 7, text
    assert "2_Latin1.py is not UTF-8 text (byte 0xe9 at offset 3, line 1); save it as UTF-8" in text
    assert "3_FlopsRaises.py: flops() raised ZeroDivisionError: no size" in text
    assert "4_BytesRaises.py: bytes_moved() raised KeyError: 'dtype'" in text
    assert "5_NanFlops.py: flops() returned nan; a count must be a finite number >= 0" in text
    assert "6_InfBytes.py: bytes_moved() returned inf" in text
    assert "7_Negative.py: flops() returned -5.0" in text
    assert "8_Text.py: flops() returned '1e9' (str); it must return a number" in text
    db = tmp_path / "db.sqlite"
    assert main(["--db", str(db), "problems", "import", str(hostile_dir)]) == 0
    cap = capsys.readouterr()
    assert "imported 1 problems" in cap.out and "7 file(s) skipped" in cap.out
    assert cap.err.count("skipped: ") == 7 and "2_Latin1.py is not UTF-8" in cap.err


def test_a_bad_file_alone_is_a_clear_error(hostile_dir):
    with pytest.raises(ProblemFileError, match=r"2_Latin1\.py is not UTF-8"):
        load_file(hostile_dir / "level1" / "2_Latin1.py")
    with pytest.raises(ProblemFileError, match=r"5_NanFlops\.py: flops\(\) returned nan"):
        load_file(hostile_dir / "level1" / "5_NanFlops.py")
    assert load_file(hostile_dir / "level1" / "5_NanFlops.py", with_counts=False).flops == 0.0
