"""One search's candidates and measurements as tables, and their export as CSV or Parquet.

    from workbench.store.search_export import search_tables, export_search

    tables = search_tables(store, search_id)         # {"candidates": DataFrame, "measurements": ...}
    export_search(store, search_id, "out/", "parquet")  # out/<id>-candidates.parquet, ...

The tables come from the search's own events (what it generated and measured, in that order),
not from the database's latest rows, so an export says what that search saw. Candidates carry
the search's decision about each (measured, trusted, not measured for want of a recording,
dropped after forecasting) and its forecast; measurements every field of the record.

Parquet keeps every text exactly. CSV is for spreadsheets, and a spreadsheet runs a cell that
starts with = + - @ (or a tab or carriage return) as a formula: candidate sources, origins and
logs are written by models and candidates, so in CSV such a text cell is written with a leading
apostrophe (the usual guard; it shows the text as typed). Read the Parquet files for exact text.
"""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.errors import StoreError
from workbench.search.events import Forecasted, Generated, Measured, Trusted, Unmeasurable, decode_all

FORMATS = ("csv", "parquet")
TABLES = ("candidates", "measurements")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def search_tables(store, search_id: str) -> dict[str, pd.DataFrame]:
    """{"candidates": one row per generated candidate, "measurements": one row per measurement}
    of the search, from its events (StoreError when there is no such search)."""
    if store.get_search(search_id) is None:
        raise StoreError(f"no search {search_id!r} in {store.path}; the Searches tab (or "
                         "`workbench search --list`) lists them")
    cands: dict[str, dict[str, Any]] = {}
    measurements: list[dict[str, Any]] = []
    for e in decode_all(store.events(search_id)):
        if isinstance(e, Generated):
            row = {"search_id": search_id, **e.candidate.to_dict(), "search_parent_id": e.parent_id,
                   "decision": "dropped", "forecast_bin": None, "forecast_confidence": None,
                   "forecast_expected_log2_speedup": None, "forecaster": None}
            cands[e.candidate.id] = row
        elif isinstance(e, Forecasted) and e.forecast.candidate_id in cands:
            f, row = e.forecast, cands[e.forecast.candidate_id]
            row["forecaster"] = f.forecaster
            if not f.abstained:
                row.update(forecast_bin=f.predicted_bin, forecast_confidence=f.confidence,
                           forecast_expected_log2_speedup=f.expected_log2_speedup)
        elif isinstance(e, Trusted) and e.candidate_id in cands:
            cands[e.candidate_id]["decision"] = "trusted"
        elif isinstance(e, Unmeasurable) and e.candidate_id in cands:
            if cands[e.candidate_id]["decision"] != "trusted":
                cands[e.candidate_id]["decision"] = "not measured (no recording)"
        elif isinstance(e, Measured):
            m = e.measurement
            if m.candidate_id in cands:
                cands[m.candidate_id]["decision"] = "measured"
            measurements.append({"search_id": search_id, **m.to_dict()})
    return {"candidates": _frame(list(cands.values())), "measurements": _frame(measurements)}


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A DataFrame whose list / dict cells are JSON text (Parquet and CSV both take them)."""
    out = [{k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in r.items()} for r in rows]
    return pd.DataFrame(out)


def _csv_safe(df: pd.DataFrame) -> pd.DataFrame:
    """Text cells that a spreadsheet would run as a formula, with a leading apostrophe."""
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = pd.Series([("'" + v) if isinstance(v, str) and v.startswith(_FORMULA_START) else v
                                  for v in out[col]], index=out.index, dtype=object)
    return out


def table_bytes(df: pd.DataFrame, fmt: str) -> bytes:
    """`df` as a CSV (formula-guarded, UTF-8) or Parquet (zstd) file's bytes."""
    if fmt not in FORMATS:
        raise StoreError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt == "csv":
        return _csv_safe(df).to_csv(index=False).encode("utf-8")
    buf = io.BytesIO()
    df.to_parquet(buf, index=False, compression="zstd")
    return buf.getvalue()


def export_name(search_id: str, table: str, fmt: str) -> str:
    """The file name of a table's export: the search id kept to letters, digits, - and _ (an id
    given on the command line must not name a path elsewhere)."""
    safe = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_") else "_" for ch in search_id)[:64]
    return f"{safe or 'search'}-{table}.{fmt}"


def export_search(store, search_id: str, directory: str | Path, fmt: str = "parquet") -> dict[str, Path]:
    """Write the search's tables to `directory` as <search_id>-<table>.<fmt>; returns the paths."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, df in search_tables(store, search_id).items():
        path = d / export_name(search_id, name, fmt)
        path.write_bytes(table_bytes(df, fmt))
        out[name] = path
    return out
