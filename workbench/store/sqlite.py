"""SQLite store (WAL mode) for problems, candidates, measurements, forecasts and searches.

Concurrency model: one connection per thread (threading.local); writes are serialised by a
process-wide lock and run in short `BEGIN IMMEDIATE` transactions; readers in other threads
and processes see committed data only (WAL). Every committed write bumps `meta.version`
inside the same transaction, so `version()` is a cheap poll for UIs in any process.
A process killed mid-transaction leaves the database as of its last commit: SQLite's journal
rolls the partial transaction back on the next open.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Iterable, Sequence

from workbench.errors import StoreError
from workbench.records import Candidate, Forecast, Measurement, Problem, now_iso
from workbench.store.schema import MIGRATIONS, SCHEMA_VERSION, TABLES  # noqa: F401 (re-exported)


def _dumps(d: dict) -> str:
    return json.dumps(d, sort_keys=True, separators=(",", ":"))


def _search_dict(row: tuple) -> dict:
    """A search as a dict: its config and fields, then id, state and created_at (these win)."""
    return {**json.loads(row[3]), "id": row[0], "state": row[1], "created_at": row[2]}


class Store:
    """The workbench database. See workbench/store/API.md for the contract."""

    def __init__(self, path: str | Path, timeout_s: float = 30.0):
        self.path = Path(path)
        self._timeout_s = timeout_s
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        if self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._migrate()

    # ------------------------------------------------------------------ connections
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(str(self.path), timeout=self._timeout_s,
                                       isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(f"PRAGMA busy_timeout={int(self._timeout_s * 1000)}")
            except sqlite3.DatabaseError as e:
                raise StoreError(f"{self.path}: cannot open as a workbench database ({e}); "
                                 "point --db at another file or move this one away") from e
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    def _write(self, fn, *args):
        """Run fn(conn, *args) in one immediate transaction that also bumps the version."""
        with self._write_lock:
            conn = self._conn()
            for attempt in range(50):
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    break
                except sqlite3.OperationalError as e:  # locked by another process
                    if "locked" not in str(e) or attempt == 49:
                        raise StoreError(f"{self.path}: database stays locked: {e}") from e
                    time.sleep(0.05)
            try:
                out = fn(conn, *args)
                conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'version'")
                conn.execute("COMMIT")
                return out
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def _migrate(self) -> None:
        conn = self._conn()
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path}: not a SQLite database ({e}); choose another --db path") from e
        with self._write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute("SELECT version FROM schema_version").fetchone()
                current = row[0] if row else 0
                if current > SCHEMA_VERSION:
                    raise StoreError(f"{self.path}: schema version {current} is newer than this code "
                                     f"({SCHEMA_VERSION}); upgrade the workbench package")
                for v in range(current, SCHEMA_VERSION):
                    for stmt in MIGRATIONS[v].split(";"):
                        if stmt.strip():
                            conn.execute(stmt)
                if row is None:
                    conn.execute("INSERT INTO schema_version(version) VALUES (?)", (SCHEMA_VERSION,))
                else:
                    conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def schema_version(self) -> int:
        return int(self._conn().execute("SELECT version FROM schema_version").fetchone()[0])

    def version(self) -> int:
        """Counter bumped by every committed write, in any process."""
        return int(self._conn().execute("SELECT value FROM meta WHERE key='version'").fetchone()[0])

    def close(self) -> None:
        with self._conns_lock:
            for c in self._conns:
                try:
                    c.close()
                except sqlite3.Error:
                    pass
            self._conns.clear()
        self._local = threading.local()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ problems
    def put_problem(self, p: Problem) -> None:
        self.put_problems([p])

    def put_problems(self, ps: Iterable[Problem]) -> None:
        rows = [(p.id, p.level, _dumps(p.to_dict())) for p in ps]
        self._write(lambda c: c.executemany(
            "INSERT OR REPLACE INTO problems(id, level, data) VALUES (?,?,?)", rows))

    def get_problem(self, problem_id: str) -> Problem | None:
        r = self._conn().execute("SELECT data FROM problems WHERE id=?", (problem_id,)).fetchone()
        return Problem.from_dict(json.loads(r[0])) if r else None

    def problems(self) -> list[Problem]:
        return [Problem.from_dict(json.loads(r[0])) for r in
                self._conn().execute("SELECT data FROM problems ORDER BY level, id")]

    # ------------------------------------------------------------------ candidates
    def put_candidate(self, c: Candidate) -> None:
        self.put_candidates([c])

    def put_candidates(self, cs: Iterable[Candidate]) -> None:
        """Store candidates; a stored candidate is never replaced. A later candidate with an id
        already stored (the same source up to comments and spacing, or a forged id) is ignored,
        so the source that was measured under an id stays the source shown and exported for it."""
        rows = [(c.id, c.problem_id, c.parent_id, c.generation, c.origin, c.backend,
                 _dumps(c.to_dict())) for c in cs]
        self._write(lambda conn: conn.executemany(
            "INSERT OR IGNORE INTO candidates(id, problem_id, parent_id, generation, origin, backend, data)"
            " VALUES (?,?,?,?,?,?,?)", rows))

    def get_candidate(self, candidate_id: str) -> Candidate | None:
        r = self._conn().execute("SELECT data FROM candidates WHERE id=?", (candidate_id,)).fetchone()
        return Candidate.from_dict(json.loads(r[0])) if r else None

    def candidates(self, problem_id: str | None = None, parent_id: str | None = None,
                   origin_prefix: str | None = None) -> list[Candidate]:
        q, args = "SELECT data FROM candidates WHERE 1=1", []
        if problem_id is not None:
            q += " AND problem_id=?"; args.append(problem_id)  # noqa: E702
        if parent_id is not None:
            q += " AND parent_id=?"; args.append(parent_id)  # noqa: E702
        if origin_prefix is not None:
            q += " AND origin LIKE ?"; args.append(origin_prefix.replace("%", r"\%") + "%")  # noqa: E702
        q += " ORDER BY rowid"
        return [Candidate.from_dict(json.loads(r[0])) for r in self._conn().execute(q, args)]

    # ------------------------------------------------------------------ measurements
    def put_measurement(self, m: Measurement) -> None:
        self.put_measurements([m])

    def put_measurements(self, ms: Iterable[Measurement]) -> None:
        rows = [(m.candidate_id, m.hardware_key, m.problem_id, m.status.value, m.speedup,
                 _dumps(m.to_dict()), m.measured_at, m.precision, m.tolerance) for m in ms]
        self._write(lambda c: c.executemany(
            "INSERT OR REPLACE INTO measurements(candidate_id, hardware_key, problem_id, status, speedup,"
            " data, measured_at, precision, tolerance) VALUES (?,?,?,?,?,?,?,?,?)", rows))

    def get_measurement(self, candidate_id: str, hardware_key: str, contract: Any = None) -> Measurement | None:
        """The candidate's measurement on `hardware_key` under `contract` (a
        `workbench.problems.contract.Contract`); None: the latest stored under any contract."""
        q, args = "SELECT data FROM measurements WHERE candidate_id=? AND hardware_key=?", [candidate_id, hardware_key]
        if contract is not None:
            q += " AND precision=? AND tolerance=?"; args += [contract.precision, contract.tolerance]  # noqa: E702
        r = self._conn().execute(q + " ORDER BY rowid DESC", args).fetchone()
        return Measurement.from_dict(json.loads(r[0])) if r else None

    def measurements(self, problem_id: str | None = None, hardware_key: str | None = None,
                     status: str | None = None, candidate_ids: Sequence[str] | None = None,
                     contract: Any = None) -> list[Measurement]:
        """Measurements matching every filter given; `contract` (a Contract) keeps those judged by
        it (its precision and tolerance)."""
        q, args = "SELECT data FROM measurements WHERE 1=1", []
        for col, val in (("problem_id", problem_id), ("hardware_key", hardware_key),
                         ("status", getattr(status, "value", status)),
                         ("precision", getattr(contract, "precision", None)),
                         ("tolerance", getattr(contract, "tolerance", None))):
            if val is not None:
                q += f" AND {col}=?"; args.append(val)  # noqa: E702
        rows = self._conn().execute(q + " ORDER BY rowid", args).fetchall()
        out = [Measurement.from_dict(json.loads(r[0])) for r in rows]
        if candidate_ids is not None:
            keep = set(candidate_ids)
            out = [m for m in out if m.candidate_id in keep]
        return out

    # ------------------------------------------------------------------ forecasts
    def put_forecast(self, f: Forecast) -> None:
        self.put_forecasts([f])

    def put_forecasts(self, fs: Iterable[Forecast]) -> None:
        rows = [(f.forecaster, f.candidate_id, f.hardware_key, f.relative_to, f.problem_id,
                 _dumps(f.to_dict())) for f in fs]
        self._write(lambda c: c.executemany(
            "INSERT OR REPLACE INTO forecasts(forecaster, candidate_id, hardware_key, relative_to,"
            " problem_id, data) VALUES (?,?,?,?,?,?)", rows))

    def forecasts(self, forecaster: str | None = None, problem_id: str | None = None,
                  hardware_key: str | None = None, candidate_ids: Sequence[str] | None = None) -> list[Forecast]:
        q, args = "SELECT data FROM forecasts WHERE 1=1", []
        for col, val in (("forecaster", forecaster), ("problem_id", problem_id),
                         ("hardware_key", hardware_key)):
            if val is not None:
                q += f" AND {col}=?"; args.append(val)  # noqa: E702
        if candidate_ids is not None:
            ids = list(candidate_ids)
            if not ids:
                return []
            if len(ids) <= 500:
                q += f" AND candidate_id IN ({','.join('?' * len(ids))})"; args.extend(ids)  # noqa: E702
        out = [Forecast.from_dict(json.loads(r[0])) for r in self._conn().execute(q + " ORDER BY rowid", args)]
        if candidate_ids is not None and len(list(candidate_ids)) > 500:
            keep = set(candidate_ids)
            out = [f for f in out if f.candidate_id in keep]
        return out

    # ------------------------------------------------------------------ searches
    def create_search(self, config: dict[str, Any], search_id: str | None = None) -> str:
        """Record a new search in state "created"; its id is `search_id` or a fresh random one."""
        sid = search_id or uuid.uuid4().hex[:12]

        def fn(c):
            if c.execute("SELECT 1 FROM searches WHERE id=?", (sid,)).fetchone():
                raise StoreError(f"a search with id {sid!r} exists already; choose another id "
                                 "or resume that search")
            c.execute("INSERT INTO searches(id, state, created_at, data) VALUES (?,?,?,?)",
                      (sid, "created", now_iso(), _dumps(dict(config))))
        self._write(fn)
        return sid

    def get_search(self, search_id: str) -> dict | None:
        r = self._conn().execute("SELECT id, state, created_at, data FROM searches WHERE id=?",
                                 (search_id,)).fetchone()
        return _search_dict(r) if r else None

    def searches(self) -> list[dict]:
        return [_search_dict(r) for r in
                self._conn().execute("SELECT id, state, created_at, data FROM searches ORDER BY rowid")]

    def set_search_state(self, search_id: str, state: str, **fields: Any) -> None:
        def fn(c):
            r = c.execute("SELECT data FROM searches WHERE id=?", (search_id,)).fetchone()
            if r is None:
                raise StoreError(f"no search {search_id!r}")
            data = {**json.loads(r[0]), **fields}
            c.execute("UPDATE searches SET state=?, data=? WHERE id=?", (state, _dumps(data), search_id))
        self._write(fn)

    def add_event(self, search_id: str, kind: str, payload: dict[str, Any]) -> int:
        def fn(c):
            r = c.execute("SELECT COALESCE(MAX(seq), 0) FROM search_events WHERE search_id=?",
                          (search_id,)).fetchone()
            seq = int(r[0]) + 1
            c.execute("INSERT INTO search_events(search_id, seq, kind, payload, created_at) VALUES (?,?,?,?,?)",
                      (search_id, seq, kind, _dumps(payload), now_iso()))
            return seq
        return self._write(fn)

    def events(self, search_id: str, after_seq: int = 0) -> list[dict]:
        return [{"seq": r[0], "kind": r[1], "payload": json.loads(r[2]), "created_at": r[3]} for r in
                self._conn().execute("SELECT seq, kind, payload, created_at FROM search_events "
                                     "WHERE search_id=? AND seq>? ORDER BY seq", (search_id, after_seq))]

    # ------------------------------------------------------------------ maintenance
    def integrity_ok(self) -> bool:
        return self._conn().execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    def counts(self) -> dict[str, int]:
        c = self._conn()
        return {t: int(c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in TABLES}

    def export_parquet(self, directory: str | Path) -> dict[str, int]:
        from workbench.store.parquet import export_parquet
        return export_parquet(self, directory)

    def import_parquet(self, directory: str | Path) -> dict[str, int]:
        from workbench.store.parquet import import_parquet
        return import_parquet(self, directory)

    def _raw_rows(self, table: str) -> list[tuple]:
        cols = self._raw_columns(table)
        return self._conn().execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY rowid").fetchall()

    def _raw_columns(self, table: str) -> list[str]:
        return [r[1] for r in self._conn().execute(f"PRAGMA table_info({table})")]

    def _raw_insert(self, table: str, cols: list[str], rows: list[tuple]) -> None:
        verb = "INSERT OR IGNORE" if table == "candidates" else "INSERT OR REPLACE"  # see put_candidates
        self._write(lambda c: c.executemany(
            f"{verb} INTO {table}({', '.join(cols)}) VALUES ({','.join('?' * len(cols))})", rows))
