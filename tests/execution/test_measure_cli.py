"""`workbench measure` end to end on the CPU."""
from __future__ import annotations

import pytest

from exec_fixtures import FIXTURES
from workbench.cli import main
from workbench.commands.measure import parse_device
from workbench.errors import ConfigError


def test_parse_device():
    assert parse_device("cpu").kind == "cpu"
    assert [str(parse_device(t)) for t in ("cuda", "cuda:3", "1", " CUDA:2 ")] == ["cuda:0", "cuda:3", "cuda:1", "cuda:2"]
    for bad in ("tpu:0", "replay:h100", "ray", "cuda:x", "-1", ""):
        with pytest.raises(ConfigError, match="--gpu .* is not a device of this machine"):
            parse_device(bad)


def test_measure_ok_and_save(capsys, tmp_path):
    db = tmp_path / "wb.sqlite"
    rc = main(["--db", str(db), "measure", "softmax", str(FIXTURES / "honest" / "softmax_manual_torch.py"),
               "--gpu", "cpu", "--save"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "status:     ok" in out and "speedup:" in out and "95% CI" in out and "bin " in out
    from workbench.store import Store

    with Store(db) as store:
        ms = store.measurements(hardware_key="cpu")
    assert len(ms) == 1 and ms[0].ok


def test_measure_failure_shows_reason_and_log(capsys):
    rc = main(["measure", "L1/01_softmax", str(FIXTURES / "faults" / "raises_in_forward.py"), "--gpu", "cpu"])
    out = capsys.readouterr().out
    assert rc == 3
    assert "status:     runtime_error" in out and "kernel launch configuration is invalid" in out


def test_measure_missing_file_is_a_clear_error(capsys, tmp_path):
    rc = main(["measure", "softmax", str(tmp_path / "nope.py"), "--gpu", "cpu"])
    assert rc == 1 and "cannot read" in capsys.readouterr().err
