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
from workbench.dataset.errors import DatasetError
from workbench.dataset.sources import RecordSet, by_id, collect
from workbench.records import Candidate, Measurement, Problem

#: Where the repository keeps the shipped data (tracked in git; the build cache beside it is not).
DEFAULT_SHIPPED_DIR = Path(__file__).resolve().parents[2] / "kernels_cache" / "shipped"
PROBLEMS_FILE = "problems.parquet"
KERNELS_FILE = "kernels.parquet"
FORMAT_VERSION = 1

PROBLEMS_SCHEMA = pa.schema([
    ("problem_id", pa.string()), ("level", pa.int64()), ("name", pa.string()),
    ("source", pa.string()), ("source_hash", pa.string()), ("description", pa.string()),
    ("category", pa.string()), ("dtype", pa.string()), ("tags", pa.list_(pa.string())),
    ("flops", pa.float64()), ("bytes_moved", pa.float64()), ("origin", pa.string()),
])

_F = pa.float64()
KERNELS_SCHEMA = pa.schema([
    ("problem_id", pa.string()), ("candidate_id", pa.string()), ("hardware_key", pa.string()),
    ("candidate_source", pa.string()), ("backend", pa.string()), ("parent_id", pa.string()),
    ("generation", pa.int64()), ("origin", pa.string()), ("candidate_created_at", pa.string()),
    ("status", pa.string()), ("reason", pa.string()), ("log", pa.string()),
    ("reference_ms", _F), ("reference_ci_low_ms", _F), ("reference_ci_high_ms", _F),
    ("reference_runs", pa.int64()),
    ("candidate_ms", _F), ("candidate_ci_low_ms", _F), ("candidate_ci_high_ms", _F),
    ("candidate_runs", pa.int64()),
    ("speedup", _F), ("bin", pa.int8()), ("bin_label", pa.string()), ("compile_s", _F),
    ("hardware_fingerprint", pa.string()), ("hardware_name", pa.string()),
    ("hardware_json", pa.string()),
    ("driver", pa.string()), ("cuda_version", pa.string()), ("torch_version", pa.string()),
    ("triton_version", pa.string()), ("measured_at", pa.string()),
])

# Measurement fields copied 1:1 into kernels.parquet columns of the same name.
_MEASUREMENT_COLUMNS = (
    "reason", "log", "reference_ms", "reference_ci_low_ms", "reference_ci_high_ms",
    "reference_runs", "candidate_ms", "candidate_ci_low_ms", "candidate_ci_high_ms",
    "candidate_runs", "speedup", "compile_s", "hardware_fingerprint", "hardware_json",
    "measured_at",
)


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


def _read(path: Path) -> pa.Table:
    if not path.exists():
        raise DatasetError(f"{path} is missing; pass the directory written by "
                           "`write_shipped` (it holds problems.parquet and kernels.parquet)")
    try:
        return pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as e:
        raise DatasetError(f"{path}: not a readable Parquet file ({e}); re-export it") from e


def _require(table: pa.Table, schema: pa.Schema, path: Path) -> None:
    missing = [n for n in schema.names if n not in table.column_names]
    if missing:
        raise DatasetError(f"{path}: columns {missing} are missing; the file is not in the shipped "
                           "layout of workbench/dataset/SCHEMA.md")


def load_shipped(directory: str | Path | None = None) -> RecordSet:
    """Read the shipped layout back into records: `problems, candidates, measurements = ...`.

    The stored `bin` column is derived data and is not read back: `Measurement.bin` recomputes
    it from the speedup with the current `workbench.bins`.
    """
    d = Path(directory) if directory is not None else DEFAULT_SHIPPED_DIR
    if not d.is_dir():
        raise DatasetError(f"{d}: no such directory; pass the directory that holds problems.parquet "
                           "and kernels.parquet (write one from a database with "
                           "`workbench dataset export-shipped DIR`)")
    pt, kt = _read(d / PROBLEMS_FILE), _read(d / KERNELS_FILE)
    _require(pt, PROBLEMS_SCHEMA, d / PROBLEMS_FILE)
    _require(kt, KERNELS_SCHEMA, d / KERNELS_FILE)
    problems = [Problem(id=r["problem_id"], level=r["level"], name=r["name"], source=r["source"],
                        description=r["description"], category=r["category"], dtype=r["dtype"],
                        tags=tuple(r["tags"] or ()), flops=r["flops"],
                        bytes_moved=r["bytes_moved"], origin=r["origin"])
                for r in pt.to_pylist()]
    candidates: dict[str, Candidate] = {}
    measurements = []
    for r in kt.to_pylist():
        cid = r["candidate_id"]
        if cid not in candidates:
            candidates[cid] = Candidate(id=cid, problem_id=r["problem_id"],
                                        source=r["candidate_source"], backend=r["backend"],
                                        parent_id=r["parent_id"], generation=r["generation"],
                                        origin=r["origin"], created_at=r["candidate_created_at"])
        measurements.append(Measurement(
            candidate_id=cid, problem_id=r["problem_id"], hardware_key=r["hardware_key"],
            status=r["status"], **{col: r[col] for col in _MEASUREMENT_COLUMNS}))
    return RecordSet(problems, list(candidates.values()), measurements)


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
