"""The shipped measurement data under `kernels_cache/shipped/` (schema: SCHEMA.md beside this file).

Two zstd-compressed Parquet files:
- `problems.parquet`: one row per problem; the reference source is stored once here.
- `kernels.parquet`: one row per (problem, candidate, hardware) measurement, with the candidate's
  source, lineage, status, reference and candidate time statistics in ms, speedup, the bin
  (recomputed with `workbench.bins.bin_of`), the hardware fingerprint, the full hardware JSON,
  the software versions and the measurement date.

`write_shipped` then `load_shipped` gives back equal records (round trip exact). Candidates that
were never measured are not shipped: the shipped data is a record of real measurements.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from workbench import bins
from workbench.dataset.layout import (DEFAULT_SHIPPED_DIR, FORMAT_VERSION, KERNELS_FILE,  # noqa: F401
                                      KERNELS_SCHEMA, PROBLEMS_FILE, PROBLEMS_SCHEMA, _MEASUREMENT_COLUMNS,
                                      load_shipped)
from workbench.dataset.sources import by_id, collect
from workbench.records import Candidate, Measurement, Problem

def problem_row(p: Problem) -> dict[str, Any]:
    """The problems.parquet row of a problem."""
    return {"problem_id": p.id, "level": p.level, "name": p.name, "source": p.source,
            "source_hash": p.source_hash, "description": p.description, "category": p.category,
            "dtype": p.dtype, "tags": list(p.tags), "flops": p.flops,
            "bytes_moved": p.bytes_moved, "origin": p.origin}


def kernel_row(c: Candidate, m: Measurement) -> dict[str, Any]:
    """The kernels.parquet row of one measurement of candidate `c`; the bin is recomputed."""
    hw = json.loads(m.hardware_json) if m.hardware_json else {}
    b = m.bin
    row = {"problem_id": m.problem_id, "candidate_id": m.candidate_id,
           "hardware_key": m.hardware_key, "candidate_source": c.source, "backend": c.backend,
           "parent_id": c.parent_id, "generation": c.generation, "origin": c.origin,
           "candidate_created_at": c.created_at, "status": m.status.value,
           "bin": b, "bin_label": bins.label(b) if b is not None else None,
           "hardware_name": hw.get("name", ""), "driver": hw.get("driver", ""),
           "cuda_version": hw.get("cuda_version", ""), "torch_version": hw.get("torch_version", ""),
           "triton_version": hw.get("triton_version", "")}
    for col in _MEASUREMENT_COLUMNS:
        row[col] = getattr(m, col)
    return row


def shipped_rows(source: Any, hardware_key: str | None = None
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """(problem rows, kernel rows, skipped) for any data source; rows are sorted by key.

    A measurement whose candidate is unknown cannot be shipped (no source) and is counted in
    `skipped`. Only problems that some kernel row refers to are kept.
    """
    rs = collect(source, hardware_key)
    cands = by_id(rs.candidates)
    kernels, skipped = [], 0
    for m in rs.measurements:
        c = cands.get(m.candidate_id)
        if c is None:
            skipped += 1
            continue
        kernels.append(kernel_row(c, m))
    kernels.sort(key=lambda r: (r["problem_id"], r["candidate_id"], r["hardware_key"]))
    used = {r["problem_id"] for r in kernels}
    problems = sorted((problem_row(p) for p in rs.problems if p.id in used),
                      key=lambda r: (r["level"], r["problem_id"]))
    return problems, kernels, skipped


def write_shipped(source: Any, directory: str | Path, hardware_key: str | None = None
                  ) -> dict[str, int]:
    """Write `source` (Store, RecordSet, tuple or directory) in the shipped layout.

    Returns {"problems": n, "kernels": n, "skipped": n}. Existing files are replaced.
    """
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    problems, kernels, skipped = shipped_rows(source, hardware_key)
    meta = {b"workbench_shipped_format": str(FORMAT_VERSION).encode(),
            b"workbench_bin_edges": json.dumps(bins.EDGES).encode()}
    for name, schema, rows in ((PROBLEMS_FILE, PROBLEMS_SCHEMA, problems),
                               (KERNELS_FILE, KERNELS_SCHEMA, kernels)):
        table = pa.Table.from_pylist(rows, schema=schema.with_metadata(meta))
        tmp = d / (name + ".tmp")
        pq.write_table(table, tmp, compression="zstd")
        tmp.replace(d / name)  # a reader never sees a half-written file
    return {"problems": len(problems), "kernels": len(kernels), "skipped": skipped}


def load_into_store(directory: str | Path | None, store, batch: int = 500,
                    progress: bool = False) -> dict[str, int]:
    """Upsert the shipped data into `store` in batches of `batch` rows; returns counts.

    Idempotent: loading the same directory twice leaves the store as after the first load.
    `progress` shows a tqdm bar over the measurements.
    """
    rs = load_shipped(directory)
    store.put_problems(rs.problems)
    for chunk in _chunks(rs.candidates, batch):
        store.put_candidates(chunk)
    bar = _bar(len(rs.measurements), "measurements", progress)
    for chunk in _chunks(rs.measurements, batch):
        store.put_measurements(chunk)
        bar.update(len(chunk))
    bar.close()
    return {"problems": len(rs.problems), "candidates": len(rs.candidates),
            "measurements": len(rs.measurements)}


def _chunks(items: list, n: int) -> Iterable[list]:
    for i in range(0, len(items), max(1, n)):
        yield items[i:i + n]


def _bar(total: int, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="row", disable=not enabled)
