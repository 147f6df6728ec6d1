"""Export measurements in the layout the Hugging Face `datasets` library and Hub read.

    DIR/README.md                          dataset card, YAML header with configs + dataset_info
    DIR/data/<split>-00000-of-00001.parquet

Each row is self-contained (the reference source is repeated per row, unlike the shipped layout)
so that `datasets.load_dataset("parquet", data_files=...)` or `load_dataset(DIR)` gives a table a
forecaster can be trained on directly. Bins are recomputed with `workbench.bins`.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from workbench import bins
from workbench.dataset.errors import DatasetError
from workbench.dataset.shipped import shipped_rows

_F = pa.float64()
HF_SCHEMA = pa.schema([
    ("problem_id", pa.string()), ("level", pa.int64()), ("reference_code", pa.string()),
    ("candidate_id", pa.string()), ("candidate_code", pa.string()), ("backend", pa.string()),
    ("parent_id", pa.string()), ("generation", pa.int64()), ("origin", pa.string()),
    ("hardware", pa.string()), ("hardware_name", pa.string()), ("hardware_fingerprint", pa.string()),
    ("status", pa.string()), ("reason", pa.string()),
    ("reference_ms", _F), ("candidate_ms", _F), ("speedup", _F),
    ("bin", pa.int8()), ("bin_label", pa.string()),
    ("torch_version", pa.string()), ("triton_version", pa.string()), ("cuda_version", pa.string()),
    ("measured_at", pa.string()),
])

# Arrow type -> the dtype name a dataset card's `features` uses.
_HF_DTYPES = {pa.string(): "string", pa.int64(): "int64", pa.int8(): "int8",
              pa.float64(): "float64", pa.bool_(): "bool"}
_SPLIT_RE = re.compile(r"^\w+$")


def hf_rows(source: Any, hardware_key: str | None = None, ok_only: bool = False) -> list[dict]:
    """Rows of the HF layout for any data source (Store, RecordSet, tuple, shipped directory)."""
    problems, kernels, _ = shipped_rows(source, hardware_key)
    ref = {p["problem_id"]: p for p in problems}
    out = []
    for k in kernels:
        if ok_only and k["status"] != "ok":
            continue
        p = ref.get(k["problem_id"], {})
        out.append({"problem_id": k["problem_id"], "level": p.get("level"),
                    "reference_code": p.get("source"), "candidate_code": k["candidate_source"],
                    "hardware": k["hardware_key"],
                    **{c: k[c] for c in HF_SCHEMA.names if c in k and c != "hardware_key"}})
    return out


def _card(name: str, split: str, n_rows: int, n_bytes: int) -> str:
    feats = "\n".join(f"  - name: {f.name}\n    dtype: {_HF_DTYPES[f.type]}" for f in HF_SCHEMA)
    table = "\n".join(f"| {i + 1} | {bins.LABELS[i]} |" for i in range(bins.N_BINS))
    return f"""---
configs:
- config_name: default
  data_files:
  - split: {split}
    path: data/{split}-*
dataset_info:
  features:
{feats}
  splits:
  - name: {split}
    num_bytes: {n_bytes}
    num_examples: {n_rows}
---

# {name}

GPU kernel measurements exported by GPU Forecasters Workbench: one row per (problem, candidate
kernel, GPU). `speedup` = reference time / candidate time, both measured in the same worker on
the same GPU (times in milliseconds, medians); it is set only when `status` is `ok`.

`bin` is the index 0..7 of the speedup bin, recomputed from `speedup` with these edges
(closed on the right, so a speedup of exactly 1.0 is bin 4, "not faster"):

| bin number | speedup |
|---|---|
{table}

`bin` in the data is `bin number - 1`. `reference_code` is the problem in the KernelBench
contract (`Model`, `get_inputs`, `get_init_inputs`); `candidate_code` defines `ModelNew`.
`parent_id` links a candidate to the kernel it was derived from (search lineage).
"""


def export_hf(source: Any, directory: str | Path, split: str = "train",
              hardware_key: str | None = None, ok_only: bool = False,
              name: str = "GPU kernel measurements") -> dict[str, Any]:
    """Write `source` as a Hugging Face datasets Parquet layout; returns {"rows", "path"}.

    `split` must be a word (letters, digits, underscore). `ok_only` keeps only rows with a
    measured speedup (what a forecaster trains on); by default failures are exported too.
    """
    if not _SPLIT_RE.match(split):
        raise DatasetError(f"split name {split!r} must be letters, digits or underscores, e.g. train")
    d = Path(directory)
    (d / "data").mkdir(parents=True, exist_ok=True)
    rows = hf_rows(source, hardware_key, ok_only)
    table = pa.Table.from_pylist(rows, schema=HF_SCHEMA)
    path = d / "data" / f"{split}-00000-of-00001.parquet"
    pq.write_table(table, path, compression="zstd")
    (d / "README.md").write_text(_card(name, split, table.num_rows, table.nbytes))
    return {"rows": table.num_rows, "path": str(path)}
