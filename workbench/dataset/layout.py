"""The shipped layout's files and columns, and reading it back into records (SCHEMA.md beside
this file). Writing lives in `shipped.py`, which reads any data source through `sources.collect`;
`collect` reads a shipped directory through `load_shipped` here."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from workbench.dataset.errors import DatasetError
from workbench.dataset.recordset import RecordSet
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
    ("precision", pa.string()), ("tolerance", pa.string()), ("trials", pa.int64()),
])
#: Columns a file written before they existed may lack; read as these values (what those
#: measurements were judged by: the file as written, the project's tolerances).
OPTIONAL_KERNEL_COLUMNS = {"precision": "native", "tolerance": "project", "trials": 0}

# Measurement fields copied 1:1 into kernels.parquet columns of the same name.
_MEASUREMENT_COLUMNS = (
    "reason", "log", "reference_ms", "reference_ci_low_ms", "reference_ci_high_ms",
    "reference_runs", "candidate_ms", "candidate_ci_low_ms", "candidate_ci_high_ms",
    "candidate_runs", "speedup", "compile_s", "hardware_fingerprint", "hardware_json",
    "measured_at", "precision", "tolerance", "trials",
)


def _read(path: Path) -> pa.Table:
    if not path.exists():
        raise DatasetError(f"{path} is missing; pass the directory written by "
                           "`write_shipped` (it holds problems.parquet and kernels.parquet)")
    try:
        return pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as e:
        raise DatasetError(f"{path}: not a readable Parquet file ({e}); re-export it") from e


def _require(table: pa.Table, schema: pa.Schema, path: Path) -> None:
    missing = [n for n in schema.names if n not in table.column_names and n not in OPTIONAL_KERNEL_COLUMNS]
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
            status=r["status"], **{col: r.get(col, OPTIONAL_KERNEL_COLUMNS.get(col)) for col in _MEASUREMENT_COLUMNS}))
    return RecordSet(problems, list(candidates.values()), measurements)
