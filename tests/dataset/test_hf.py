"""Hugging Face datasets layout: file names, dataset card, and reading it with `datasets`."""
from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from workbench import bins
from workbench.dataset import DatasetError, export_hf


def test_layout_and_card(tmp_path, store, records):
    out = export_hf(store, tmp_path, split="train")
    path = tmp_path / "data" / "train-00000-of-00001.parquet"
    assert out == {"rows": len(records[2]), "path": str(path)}
    t = pq.read_table(path)
    card = (tmp_path / "README.md").read_text()
    assert card.startswith("---\n") and "path: data/train-*" in card
    assert f"num_examples: {t.num_rows}" in card
    for name in t.column_names:  # every column is declared in dataset_info
        assert f"- name: {name}\n" in card
    for label in bins.LABELS:
        assert label in card
    rows = t.to_pylist()
    refs = {p.id: p.source for p in records[0]}
    assert all(r["reference_code"] == refs[r["problem_id"]] for r in rows)  # self-contained rows


def test_ok_only_gpu_filter_and_bad_split(tmp_path, store):
    out = export_hf(store, tmp_path, split="h100_ok", hardware_key="h100", ok_only=True)
    rows = pq.read_table(out["path"]).to_pylist()
    assert rows and all(r["status"] == "ok" and r["hardware"] == "h100" for r in rows)
    assert all(r["bin"] == bins.bin_of(r["speedup"]) for r in rows)
    with pytest.raises(DatasetError, match="split name"):
        export_hf(store, tmp_path, split="bad/split")


def test_datasets_library_reads_it(tmp_path, store, records):
    datasets = pytest.importorskip("datasets")
    export_hf(store, tmp_path / "hf", split="train")
    ds = datasets.load_dataset("parquet", data_files={"train": str(tmp_path / "hf" / "data" / "train-*.parquet")},
                               split="train", cache_dir=str(tmp_path / "cache"))
    assert ds.num_rows == len(records[2])
    assert set(ds.column_names) >= {"reference_code", "candidate_code", "speedup", "bin", "hardware"}
    by_dir = datasets.load_dataset(str(tmp_path / "hf"), split="train", cache_dir=str(tmp_path / "cache2"))
    assert by_dir.num_rows == ds.num_rows  # the card's `configs` section is understood
    assert sorted(by_dir["candidate_id"]) == sorted(ds["candidate_id"])
