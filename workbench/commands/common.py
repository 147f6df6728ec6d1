"""Helpers shared by the command modules."""
from __future__ import annotations

import os
from pathlib import Path


def db_path(args) -> Path:
    """The database the user chose: --db, then $WORKBENCH_DB, then ./workbench.sqlite."""
    return Path(getattr(args, "db", None) or os.environ.get("WORKBENCH_DB") or "workbench.sqlite")


def table(rows: list[dict], columns: list[str]) -> str:
    """A plain text table, columns padded to their widest cell."""
    widths = {c: max([len(c)] + [len(str(r.get(c, ""))) for r in rows]) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns),
             "  ".join("-" * widths[c] for c in columns)]
    for r in rows:
        lines.append("  ".join(str(r.get(c, "")).ljust(widths[c]) for c in columns))
    return "\n".join(lines)
