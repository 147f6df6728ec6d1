"""`workbench db info|export|import`."""
from __future__ import annotations

from workbench.commands.common import db_path
from workbench.store import Store


def register(sub) -> None:
    p = sub.add_parser("db", help="inspect, export and import the SQLite database",
                       description="The database holds problems, candidates, measurements, "
                       "forecasts and searches (SQLite, WAL mode). Choose it with --db or "
                       "$WORKBENCH_DB (default ./workbench.sqlite).")
    ps = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    i = ps.add_parser("info", help="path, schema version, version counter and row counts",
                      description="Print the database path, its schema version, the write "
                      "counter UIs poll, and the number of rows in every table.")
    i.set_defaults(handler=_info)
    e = ps.add_parser("export", help="write every table to DIR/<table>.parquet",
                      description="Write one zstd Parquet file per table into DIR; `db import DIR` "
                      "into another database gives back the same records.")
    e.add_argument("dir", help="output directory (created if missing)")
    e.set_defaults(handler=_export)
    m = ps.add_parser("import", help="read DIR/<table>.parquet files written by `db export`",
                      description="Upsert the tables found in DIR (files written by `db export`) "
                      "into the database; rows with the same key are replaced.")
    m.add_argument("dir", help="directory written by `workbench db export`")
    m.set_defaults(handler=_import)


def _info(args) -> int:
    with Store(db_path(args)) as s:
        print(f"path: {s.path.resolve()}\nschema version: {s.schema_version()}\n"
              f"version counter: {s.version()}")
        for t, n in s.counts().items():
            print(f"{t:15s} {n}")
    return 0


def _export(args) -> int:
    with Store(db_path(args)) as s:
        counts = s.export_parquet(args.dir)
    print("exported " + ", ".join(f"{n} {t}" for t, n in counts.items()) + f" to {args.dir}")
    return 0


def _import(args) -> int:
    with Store(db_path(args)) as s:
        counts = s.import_parquet(args.dir)
    print("imported " + ", ".join(f"{n} {t}" for t, n in counts.items()) + f" into {db_path(args)}")
    return 0
