"""The SQLite store (WAL) and its Parquet export/import. Contract: API.md beside this file."""
from __future__ import annotations

from workbench.store.sqlite import MIGRATIONS, SCHEMA_VERSION, Store  # noqa: F401
