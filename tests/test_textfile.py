"""Source files must be UTF-8: anything else is a clear error naming the file (never a traceback)."""
from __future__ import annotations

import pytest

from workbench.cli import main
from workbench.errors import CandidateError
from workbench.textfile import read_source

CANDIDATE = "# r\u00e9sum\u00e9\nimport torch\nclass ModelNew(torch.nn.Module):\n    pass\n"


def test_utf8_with_or_without_bom_is_read(tmp_path):
    f = tmp_path / "c.py"
    f.write_bytes(CANDIDATE.encode("utf-8"))
    assert read_source(f, "candidate", CandidateError) == CANDIDATE
    f.write_bytes(b"\xef\xbb\xbf" + CANDIDATE.encode("utf-8"))
    assert read_source(f, "candidate", CandidateError) == CANDIDATE


def test_other_encodings_and_missing_files_are_named(tmp_path):
    f = tmp_path / "latin1.py"
    f.write_bytes(b"x = 1\n" + CANDIDATE.encode("latin-1"))
    with pytest.raises(CandidateError, match=r"candidate file .*latin1\.py is not UTF-8 text "
                                              r"\(byte 0xe9 at offset 9, line 2\); save it as UTF-8"):
        read_source(f, "candidate", CandidateError)
    with pytest.raises(CandidateError, match=r"candidate file .*missing\.py: cannot read"):
        read_source(tmp_path / "missing.py", "candidate", CandidateError)


@pytest.mark.parametrize("command", [["measure", "softmax", "{f}", "--gpu", "cpu"],
                                     ["forecast", "softmax", "{f}", "--forecaster", "roofline"]])
def test_cli_reports_a_non_utf8_candidate(tmp_path, capsys, command):
    f = tmp_path / "latin1.py"
    f.write_bytes(CANDIDATE.encode("latin-1"))
    assert main([a.format(f=f) for a in command]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: candidate file") and "latin1.py is not UTF-8" in err
