"""torch.compile baselines: loading compile-<gpu>.jsonl files (newest row kept, error rows
skipped, malformed lines reported with their line number) and the shipped files themselves."""
from __future__ import annotations

import json

import pytest

from workbench.dataset import (DEFAULT_SHIPPED_DIR, CompileBaseline, DatasetError,
                               load_compile_baselines, over_compile, shipped_compile_baselines,
                               speedup_over_compile)


def _row(pid: str, gpu: str, eager: float, compiled: float, at: str, **extra) -> dict:
    row = {"problem_id": pid, "mode": "max-autotune-no-cudagraphs", "eager_ms": eager,
           "compiled_ms": compiled, "speedup_over_eager": eager / compiled, "compile_s": 3.5,
           "eager_cv_pct": 0.4, "compiled_cv_pct": 0.6, "hardware_key": gpu,
           "hardware_fingerprint": f"fp-{gpu}", "measured_at": at}
    row.update(extra)
    return row


def _write(path, rows) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))


@pytest.fixture
def two_gpus(tmp_path):
    _write(tmp_path / "compile-h100.jsonl", [
        _row("L1/01_softmax", "h100", 0.2, 0.1, "2026-11-01T10:00:00Z"),
        _row("L1/02_relu", "h100", 0.3, 0.3, "2026-11-01T10:00:01Z"),
        _row("L1/01_softmax", "h100", 0.2, 0.16, "2026-11-20T08:00:00Z"),  # newer: kept
        "",
        {"problem_id": "L1/03_gelu", "hardware_key": "h100", "error": "compile failed: OOM"},
    ])
    _write(tmp_path / "compile-h200.jsonl", [
        _row("L1/01_softmax", "h200", 0.18, 0.12, "2026-11-25T08:00:00Z"),
        _row("L1/01_softmax", "h200", 0.18, 0.09, "2026-11-02T08:00:00Z"),  # older: dropped
    ])
    (tmp_path / "notes.jsonl").write_text("not a baseline file\n")  # ignored: wrong name
    return tmp_path


def test_loads_every_gpu_keyed_by_problem_and_gpu(two_gpus):
    got = load_compile_baselines(two_gpus)
    assert set(got) == {("L1/01_softmax", "h100"), ("L1/02_relu", "h100"), ("L1/01_softmax", "h200")}
    relu = got[("L1/02_relu", "h100")]
    assert relu == CompileBaseline(problem_id="L1/02_relu", mode="max-autotune-no-cudagraphs",
                                   eager_ms=0.3, compiled_ms=0.3, speedup_over_eager=1.0,
                                   compile_s=3.5, eager_cv_pct=0.4, compiled_cv_pct=0.6,
                                   hardware_key="h100", hardware_fingerprint="fp-h100",
                                   measured_at="2026-11-01T10:00:01Z")
    with pytest.raises(AttributeError):
        relu.eager_ms = 1.0  # frozen


def test_duplicate_problem_keeps_the_newest_row_whatever_the_line_order(two_gpus):
    got = load_compile_baselines(two_gpus)
    h100 = got[("L1/01_softmax", "h100")]  # newer row last in the file
    assert h100.measured_at == "2026-11-20T08:00:00Z" and h100.compiled_ms == 0.16
    h200 = got[("L1/01_softmax", "h200")]  # newer row first in the file
    assert h200.measured_at == "2026-11-25T08:00:00Z" and h200.compiled_ms == 0.12


def test_error_rows_are_skipped(two_gpus):
    assert ("L1/03_gelu", "h100") not in load_compile_baselines(two_gpus)


def test_missing_directory_or_no_files_gives_empty(tmp_path):
    assert load_compile_baselines(tmp_path / "nowhere") == {}
    assert load_compile_baselines(tmp_path) == {}


@pytest.mark.parametrize("bad, why", [
    ('{"problem_id": "L1/02_relu", ', "JSON"),
    ('["a", "list"]', "JSON object"),
    (json.dumps({k: v for k, v in _row("L1/02_relu", "h100", 0.3, 0.2, "2026-11-01T10:00:00Z").items()
                 if k != "compiled_ms"}), "compiled_ms"),
    (json.dumps(_row("L1/02_relu", "h100", 0.3, 0.2, "2026-11-01T10:00:00Z", eager_ms="fast")), "eager_ms"),
    (json.dumps(_row("L1/02_relu", "h100", 0.3, 0.2, "2026-11-01T10:00:00Z", speedup_over_eager=0.0)),
     "speedup_over_eager"),
    (json.dumps(_row("L1/02_relu", "h100", 0.3, 0.2, "yesterday")), "measured_at"),
])
def test_malformed_line_names_file_and_line_number(tmp_path, bad, why):
    path = tmp_path / "compile-h100.jsonl"
    _write(path, [_row("L1/01_softmax", "h100", 0.2, 0.1, "2026-11-01T10:00:00Z"), "", bad])
    with pytest.raises(DatasetError, match=r"compile-h100\.jsonl, line 3") as e:
        load_compile_baselines(tmp_path)
    assert why in str(e.value)


def test_speedup_over_compile_divides_by_the_compiled_speedup(two_gpus):
    b = load_compile_baselines(two_gpus)[("L1/01_softmax", "h100")]  # 0.2 / 0.16 = 1.25x over eager
    assert speedup_over_compile(2.5, b) == pytest.approx(2.0)
    assert speedup_over_compile(1.0, b) == pytest.approx(0.8)  # as fast as eager: slower than compile


def test_over_compile_looks_up_problem_and_gpu_and_needs_a_speedup(two_gpus):
    bs = load_compile_baselines(two_gpus)
    assert over_compile(bs, "L1/01_softmax", "h100", 2.5) == pytest.approx(2.0)
    assert over_compile(bs, "L1/01_softmax", "h200", 3.0) == pytest.approx(3.0 / 1.5)  # 0.18 / 0.12
    assert over_compile(bs, "L1/03_gelu", "h100", 2.0) is None   # its baseline row is an error
    assert over_compile(bs, "L1/02_relu", "a100", 2.0) is None   # no baseline on that GPU type
    assert over_compile(bs, "L1/01_softmax", "h100", None) is None  # failed: no speedup


needs_baselines = pytest.mark.skipif(not any(DEFAULT_SHIPPED_DIR.glob("compile-*.jsonl")),
                                     reason="shipped torch.compile baselines missing")


@needs_baselines
@pytest.mark.parametrize("gpu", ["h100", "h200"])
def test_shipped_baselines_cover_the_problems_and_are_consistent(gpu):
    got = load_compile_baselines()
    rows = [b for (pid, key), b in got.items() if key == gpu]
    assert len(rows) >= 60
    for b in rows:
        assert b.hardware_key == gpu and b.eager_ms > 0 and b.compiled_ms > 0
        assert b.speedup_over_eager == pytest.approx(b.eager_ms / b.compiled_ms, rel=1e-9)


@needs_baselines
def test_shipped_baselines_are_read_once():
    first = shipped_compile_baselines()
    assert shipped_compile_baselines() is first
    assert dict(first) == load_compile_baselines(DEFAULT_SHIPPED_DIR)
