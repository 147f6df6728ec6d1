"""Shipped layout: exact round trip, de-duplicated references, recomputed bins, idempotent loads."""
from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from workbench import bins
from workbench.dataset import DatasetError, RecordSet, load_into_store, load_shipped, write_shipped
from workbench.store import Store


def test_round_trip_from_store_is_exact(tmp_path, store, records):
    problems, candidates, measurements = records
    counts = write_shipped(store, tmp_path / "shipped")
    assert counts == {"problems": 2, "kernels": len(measurements), "skipped": 0}
    ps, cs, ms = load_shipped(tmp_path / "shipped")
    assert sorted(ps, key=lambda p: p.id) == sorted(problems[:2], key=lambda p: p.id)  # unused dropped
    assert sorted(cs, key=lambda c: c.id) == sorted(candidates, key=lambda c: c.id)
    key = lambda m: (m.problem_id, m.candidate_id, m.hardware_key)  # noqa: E731
    assert sorted(ms, key=key) == sorted(measurements, key=key)


def test_files_are_zstd_one_row_per_measurement_with_reference_stored_once(tmp_path, store, records):
    write_shipped(store, tmp_path)
    kernels = pq.ParquetFile(tmp_path / "kernels.parquet")
    assert kernels.metadata.row_group(0).column(0).compression == "ZSTD"
    t = kernels.read()
    assert "source" not in t.column_names  # the reference lives in problems.parquet only
    keys = list(zip(*(t.column(c).to_pylist() for c in ("problem_id", "candidate_id", "hardware_key"))))
    assert len(keys) == len(set(keys)) == len(records[2])
    p = pq.read_table(tmp_path / "problems.parquet")
    assert sorted(p.column("problem_id").to_pylist()) == ["L1/01_softmax", "L2/05_gemm_relu"]
    for row in t.to_pylist():  # bin column recomputed from the speedup; failures have none
        if row["status"] == "ok":
            assert row["bin"] == bins.bin_of(row["speedup"])
            assert row["bin_label"] == bins.LABELS[row["bin"]]
        else:
            assert row["bin"] is None and row["speedup"] is None
        assert row["torch_version"] == "2.9.0" and row["hardware_name"].startswith("NVIDIA")


def test_hardware_filter_and_tuple_source(tmp_path, records):
    counts = write_shipped(records, tmp_path, hardware_key="h200")
    assert counts["kernels"] == 1 and counts["problems"] == 1
    _, cs, ms = load_shipped(tmp_path)
    assert [m.hardware_key for m in ms] == ["h200"] and len(cs) == 1


def test_measurement_without_candidate_is_skipped(tmp_path, records):
    problems, candidates, measurements = records
    counts = write_shipped(RecordSet(problems, candidates[1:], measurements), tmp_path)
    n_c1 = sum(m.candidate_id == candidates[0].id for m in measurements)
    assert counts["skipped"] == n_c1 and counts["kernels"] == len(measurements) - n_c1


def test_load_into_store_is_idempotent(tmp_path, store, records):
    write_shipped(store, tmp_path / "shipped")
    with Store(tmp_path / "fresh.sqlite") as fresh:
        counts = load_into_store(tmp_path / "shipped", fresh)
        assert counts == {"problems": 2, "candidates": 4, "measurements": 5}
        first = (fresh.problems(), fresh.candidates(), fresh.measurements())
        load_into_store(tmp_path / "shipped", fresh, batch=2)
        assert (fresh.problems(), fresh.candidates(), fresh.measurements()) == first
        assert fresh.counts()["measurements"] == 5


def test_lineage_survives(tmp_path, store, records):
    _, candidates, _ = records
    write_shipped(store, tmp_path)
    _, cs, _ = load_shipped(tmp_path)
    child = next(c for c in cs if c.id == candidates[1].id)
    assert child.parent_id == candidates[0].id and child.generation == 1


def test_missing_or_wrong_files_are_clear_errors(tmp_path, store):
    with pytest.raises(DatasetError, match="no such directory"):
        load_shipped(tmp_path / "nope")
    (tmp_path / "d").mkdir()
    with pytest.raises(DatasetError, match="problems.parquet is missing"):
        load_shipped(tmp_path / "d")
    write_shipped(store, tmp_path / "d")
    (tmp_path / "d" / "kernels.parquet").write_bytes(b"not parquet")
    with pytest.raises(DatasetError, match="not a readable Parquet"):
        load_shipped(tmp_path / "d")
