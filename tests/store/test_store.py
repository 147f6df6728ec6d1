"""Store contract: round trips, upserts, events, concurrency, a killed writer, migration, Parquet."""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from workbench.errors import StoreError
from workbench.records import Candidate, Forecast, Measurement, Problem, Status
from workbench.store import MIGRATIONS, SCHEMA_VERSION, Store


def _problem(i=0):
    return Problem(id=f"L1/{i:02d}_p", level=1, name=f"{i:02d}_p", source=f"# p{i}\n", tags=("a", "b"),
                   flops=1e9, bytes_moved=2e6)


def _cand(src="x = 1\n", parent=None, pid="L1/00_p"):
    return Candidate.from_source(pid, src, parent_id=parent, origin="zoo:test")


def _meas(c, hw="h100", speedup=1.5, status=Status.OK):
    return Measurement(candidate_id=c.id, problem_id=c.problem_id, hardware_key=hw, status=status,
                       reference_ms=1.5, candidate_ms=1.0, speedup=speedup if status is Status.OK else None)


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "db.sqlite") as s:
        yield s


def test_round_trip_every_record(store):
    p = _problem()
    c = _cand()
    child = _cand("x = 2\n", parent=c.id)
    m = _meas(c)
    f = Forecast(forecaster="learned", candidate_id=c.id, problem_id=c.problem_id, hardware_key="h100",
                 probabilities=(0.1,) * 8, reasoning="why", p_fail=0.2)
    store.put_problem(p)
    store.put_candidates([c, child])
    store.put_measurement(m)
    store.put_forecast(f)
    assert store.get_problem(p.id) == p
    assert store.get_candidate(c.id) == c
    assert store.candidates(parent_id=c.id) == [child]
    assert store.candidates(problem_id="L1/00_p", origin_prefix="zoo:") == [c, child]
    assert store.get_measurement(c.id, "h100") == m
    assert store.measurements(status="ok") == [m]
    assert store.forecasts(candidate_ids=[c.id]) == [f]
    assert store.get_problem("nope") is None and store.get_candidate("nope") is None


def test_upserts_are_idempotent_and_replace(store):
    c = _cand()
    store.put_candidate(c)
    store.put_candidate(c)
    store.put_measurement(_meas(c, speedup=1.0))
    store.put_measurement(_meas(c, speedup=3.0))
    assert store.counts()["candidates"] == 1
    assert [m.speedup for m in store.measurements()] == [3.0]


def test_events_are_ordered_per_search_and_version_moves(store):
    v0 = store.version()
    a = store.create_search({"problem": "L1/00_p", "budget": 8})
    b = store.create_search({"problem": "L1/01_p"})
    assert [store.add_event(a, "generated", {"i": i}) for i in range(3)] == [1, 2, 3]
    assert store.add_event(b, "generated", {}) == 1
    assert [e["payload"]["i"] for e in store.events(a, after_seq=1)] == [1, 2]
    store.set_search_state(a, "finished", best=2.5)
    s = store.get_search(a)
    assert s["state"] == "finished" and s["best"] == 2.5 and s["budget"] == 8
    assert store.version() > v0
    with pytest.raises(StoreError):
        store.set_search_state("missing", "x")


def test_version_seen_from_another_process(tmp_path):
    path = tmp_path / "db.sqlite"
    store = Store(path)
    v0 = store.version()
    code = textwrap.dedent(f"""
        from workbench.store import Store
        s = Store({str(path)!r}); s.create_search({{"x": 1}})
    """)
    subprocess.run([sys.executable, "-c", code], check=True)
    assert store.version() == v0 + 1


def _reader_proc(path, n, q):
    s = Store(path)
    seen = []
    for _ in range(n):
        ms = s.measurements()
        seen.append(len(ms))
        time.sleep(0.005)
    q.put(seen)


def test_concurrent_readers_threads_and_process(tmp_path):
    path = tmp_path / "db.sqlite"
    store = Store(path)
    cands = [_cand(f"x = {i}\n") for i in range(200)]
    store.put_candidates(cands)
    errors, seen_threads = [], []

    def reader():
        try:
            last = 0
            for _ in range(60):
                n = len(store.measurements())
                assert n >= last  # committed rows never disappear
                last = n
                seen_threads.append(n)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    q = mp.get_context("spawn").Queue()
    proc = mp.get_context("spawn").Process(target=_reader_proc, args=(str(path), 40, q))
    proc.start()
    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for c in cands:
        store.put_measurement(_meas(c))
    for t in threads:
        t.join()
    proc_seen = q.get(timeout=60)
    proc.join(timeout=60)
    assert not errors
    assert proc_seen == sorted(proc_seen)
    assert len(store.measurements()) == 200 and store.integrity_ok()


def test_killed_writer_leaves_no_partial_rows(tmp_path):
    path = tmp_path / "db.sqlite"
    store = Store(path)
    store.put_candidate(_cand("committed = 1\n"))
    code = textwrap.dedent(f"""
        import sys, time
        from workbench.records import Candidate
        from workbench.store import Store
        s = Store({str(path)!r})
        def fn(conn):
            for i in range(100000):
                c = Candidate.from_source("L1/00_p", f"y = {{i}}\\n")
                conn.execute("INSERT INTO candidates(id, problem_id, data) VALUES (?,?,?)", (c.id, "L1/00_p", "{{}}"))
                if i == 500:
                    print("inside", flush=True)
                    time.sleep(60)
        s._write(fn)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "inside"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    after = Store(path)
    assert after.integrity_ok()
    assert after.counts()["candidates"] == 1  # the killed transaction left nothing behind
    after.put_candidate(_cand("later = 1\n"))  # and the database is writable again
    assert after.counts()["candidates"] == 2


def test_migration_from_v1_keeps_data(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    for stmt in MIGRATIONS[0].split(";"):
        if stmt.strip():
            conn.execute(stmt)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (1)")
    c = _cand()
    m = _meas(c)
    conn.execute("INSERT INTO measurements(candidate_id, hardware_key, problem_id, status, speedup, data)"
                 " VALUES (?,?,?,?,?,?)", (c.id, "h100", c.problem_id, "ok", 1.5, json.dumps(m.to_dict())))
    conn.commit()
    conn.close()
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION == 2
    assert store.get_measurement(c.id, "h100") == m
    col = store._conn().execute("SELECT measured_at FROM measurements").fetchone()[0]
    assert col == m.measured_at  # the v2 column was back-filled


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "new.sqlite"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE schema_version SET version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer"):
        Store(path)


def test_not_a_database_is_a_clear_error(tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError):
        Store(path)


def test_parquet_round_trip(tmp_path, store):
    c = _cand()
    store.put_problem(_problem())
    store.put_candidate(c)
    store.put_measurement(_meas(c))
    sid = store.create_search({"a": 1})
    store.add_event(sid, "generated", {"candidate": c.id})
    counts = store.export_parquet(tmp_path / "pq")
    assert counts["candidates"] == 1 and counts["search_events"] == 1
    other = Store(tmp_path / "other.sqlite")
    other.import_parquet(tmp_path / "pq")
    assert other.get_candidate(c.id) == c
    assert other.measurements() == store.measurements()
    assert other.events(sid) == store.events(sid)
    assert other.problems() == store.problems()
