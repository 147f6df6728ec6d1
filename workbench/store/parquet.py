"""Export and import every store table to Parquet, one file per table, round-trip exact."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from workbench.errors import StoreError
from workbench.store.schema import TABLES


def export_parquet(store, directory: str | Path) -> dict[str, int]:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    counts = {}
    for t in TABLES:
        cols = store._raw_columns(t)
        rows = store._raw_rows(t)
        table = pa.table({c: [r[i] for r in rows] for i, c in enumerate(cols)}) if rows else \
            pa.table({c: pa.array([], type=pa.string()) for c in cols})
        pq.write_table(table, d / f"{t}.parquet", compression="zstd")
        counts[t] = len(rows)
    return counts


def import_parquet(store, directory: str | Path) -> dict[str, int]:
    d = Path(directory)
    if not d.is_dir():
        raise StoreError(f"{d}: not a directory; pass the folder written by `workbench db export`")
    counts = {}
    for t in TABLES:
        f = d / f"{t}.parquet"
        if not f.exists():
            continue
        table = pq.read_table(f)
        known = set(store._raw_columns(t))
        cols = [c for c in table.column_names if c in known]
        data = table.select(cols).to_pylist()
        store._raw_insert(t, cols, [tuple(r[c] for c in cols) for r in data])
        counts[t] = len(data)
    if not counts:
        raise StoreError(f"{d}: no table files (*.parquet) found")
    return counts
