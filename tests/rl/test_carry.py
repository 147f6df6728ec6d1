"""Splitting a model file into carryable parts and joining them back, byte for byte."""
from __future__ import annotations

import json
import os

import pytest

from workbench.errors import ConfigError
from workbench.rl import carry
from bench_scripts import load_bench


def _file(tmp_path, size):
    f = tmp_path / "model.gguf"
    f.write_bytes(os.urandom(size))
    return f


def test_split_then_join_restores_the_file(tmp_path):
    f = _file(tmp_path, 2_500_000)
    parts = tmp_path / "parts"
    m = carry.split(f, parts, part_mib=1.0)
    assert [p["name"] for p in m["parts"]] == ["part-a", "part-b", "part-c"]
    assert all((parts / p["name"]).stat().st_size <= 1 << 20 for p in m["parts"])
    assert sum(p["size"] for p in m["parts"]) == f.stat().st_size
    # carried separately, as the device calls do: the parts and manifest land in another folder
    dest = tmp_path / "dest"
    dest.mkdir()
    for name in ("part-a", "part-b", "part-c", carry.MANIFEST):
        (dest / name).write_bytes((parts / name).read_bytes())
    out = carry.join(dest)
    assert out == dest / "model.gguf" and out.read_bytes() == f.read_bytes()
    assert not (dest / "part-a").exists()
    assert carry.join(dest) == out  # joining again keeps the verified file


def test_join_refuses_a_missing_or_altered_part(tmp_path):
    f = _file(tmp_path, 300_000)
    parts = tmp_path / "parts"
    carry.split(f, parts, part_mib=0.2)
    (parts / "part-b").rename(tmp_path / "b")
    with pytest.raises(ConfigError, match="part missing"):
        carry.join(parts)
    data = bytearray((tmp_path / "b").read_bytes())
    data[0] ^= 0xFF
    (parts / "part-b").write_bytes(bytes(data))
    with pytest.raises(ConfigError, match="SHA-256"):
        carry.join(parts, keep_parts=True)
    assert not (parts / "model.gguf").exists()
    assert json.loads((parts / carry.MANIFEST).read_text())["name"] == "model.gguf"


def test_cli_split_and_join(tmp_path, capsys):
    f = _file(tmp_path, 100_000)
    assert carry.main(["split", str(tmp_path / "p"), "--file", str(f), "--part-mib", "0.05"]) == 0
    assert carry.main(["join", str(tmp_path / "p")]) == 0
    assert (tmp_path / "p" / "model.gguf").read_bytes() == f.read_bytes()
    assert carry.main(["join", str(tmp_path / "nowhere")]) == 2
    assert "no manifest.json" in capsys.readouterr().err


def test_the_benchmark_finds_the_joined_gguf(tmp_path):
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "rl_warmstart.py"
    bench = load_bench("rl_warmstart", path)
    (tmp_path / "manifest.json").write_text("{}")
    with pytest.raises(ConfigError, match="0 GGUF files"):
        bench.model_location(str(tmp_path), None)
    (tmp_path / "a.gguf").write_bytes(b"x")
    assert bench.model_location(str(tmp_path), None) == (str(tmp_path), "a.gguf")
    (tmp_path / "b.gguf").write_bytes(b"x")
    with pytest.raises(ConfigError, match="2 GGUF files"):
        bench.model_location(str(tmp_path), None)
    assert bench.model_location(str(tmp_path), "b.gguf") == (str(tmp_path), "b.gguf")
    with pytest.raises(ConfigError, match="no such GGUF"):
        bench.model_location(str(tmp_path), "c.gguf")
