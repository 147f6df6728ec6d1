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


def test_a_later_candidate_with_the_same_id_never_replaces_the_stored_source(store, tmp_path):
    first = _cand("x = 1\n")
    same_id = _cand("x = 1  # import os; os.system('...')\n")  # differs only in a comment
    forged = Candidate(id=first.id, problem_id="L1/00_p", source="x = 666\n", origin="llm:forged")
    assert same_id.id == first.id and same_id.source != first.source
    store.put_candidate(first)
    store.put_candidates([same_id, forged])
    assert store.get_candidate(first.id) == first and store.candidates() == [first]
    # Importing an export that carries another source under the id keeps the stored one too.
    other = Store(tmp_path / "other.sqlite")
    other.put_candidate(forged)
    other.export_parquet(tmp_path / "export")
    store.import_parquet(tmp_path / "export")
    assert store.get_candidate(first.id).source == "x = 1\n"


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
    old = {k: v for k, v in m.to_dict().items() if k not in ("precision", "tolerance", "trials")}
    conn.execute("INSERT INTO measurements(candidate_id, hardware_key, problem_id, status, speedup, data)"
                 " VALUES (?,?,?,?,?,?)", (c.id, "h100", c.problem_id, "ok", 1.5, json.dumps(old)))
    conn.commit()
    conn.close()
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION == 3
    assert store.get_measurement(c.id, "h100") == m
    col = store._conn().execute("SELECT measured_at FROM measurements").fetchone()[0]
    assert col == m.measured_at  # the v2 column was back-filled
    # v3: the row reads as measured as written, judged by the project's tolerances.
    assert store._conn().execute("SELECT precision, tolerance FROM measurements").fetchone() == ("native", "project")
    assert (m.precision, m.tolerance) == ("native", "project")


def test_measurements_under_two_contracts_are_two_records(tmp_path):
    from workbench.problems.contract import Contract

    with Store(tmp_path / "db.sqlite") as store:
        c = _cand()
        native = _meas(c)
        fp16 = native.replace(precision="fp16", tolerance="kernelbench", trials=5, speedup=2.5)
        store.put_measurements([native, fp16])
        assert len(store.measurements(hardware_key="h100")) == 2
        assert store.get_measurement(c.id, "h100", Contract()) == native
        assert store.get_measurement(c.id, "h100", Contract("fp16")) == fp16
        assert store.get_measurement(c.id, "h100") == fp16  # no contract named: the latest
        assert store.measurements(contract=Contract("fp16")) == [fp16]
        assert store.measurements(contract=Contract("fp32")) == []
        out = tmp_path / "export"
        store.export_parquet(out)
    with Store(tmp_path / "copy.sqlite") as copy:
        copy.import_parquet(out)
        assert copy.measurements(contract=Contract("fp16")) == [fp16]


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


# --------------------------------------------------------------------------- more of the contract
def _forecast(c, name="llm", hw="h100", probs=(0.05, 0.05, 0.1, 0.2, 0.3, 0.2, 0.05, 0.05)):
    return Forecast(forecaster=name, candidate_id=c.id, problem_id=c.problem_id, hardware_key=hw,
                    probabilities=probs, reasoning="memory bound", raw_sum=0.9)


def test_query_filters(store):
    a, b = _cand("a = 1\n"), _cand("b = 1\n", pid="L1/01_p")
    store.put_candidates([a, b])
    store.put_measurements([_meas(a, "h100"), _meas(a, "h200"), _meas(b, "h100", status=Status.INCORRECT)])
    assert {m.hardware_key for m in store.measurements(problem_id="L1/00_p")} == {"h100", "h200"}
    assert [m.candidate_id for m in store.measurements(hardware_key="h100", status=Status.INCORRECT)] == [b.id]
    assert [m.hardware_key for m in store.measurements(candidate_ids=[a.id], hardware_key="h200")] == ["h200"]
    assert store.measurements(candidate_ids=[]) == []
    assert store.candidates(problem_id="L1/01_p") == [b]
    assert store.candidates(origin_prefix="mutation:") == []
    store.put_forecasts([_forecast(a), _forecast(a, "learned"), _forecast(b, hw="h200")])
    assert {f.forecaster for f in store.forecasts(candidate_ids=[a.id])} == {"llm", "learned"}
    assert [f.candidate_id for f in store.forecasts(problem_id="L1/01_p", hardware_key="h200")] == [b.id]
    assert store.forecasts(forecaster="nobody") == []
    assert store.forecasts(candidate_ids=[]) == []


def test_forecast_upsert_replaces_and_keeps_tuples(store):
    c = _cand()
    store.put_forecast(_forecast(c))
    newer = _forecast(c, probs=(0.0,) * 7 + (1.0,))
    store.put_forecast(newer)
    store.put_forecast(newer)
    got = store.forecasts()
    assert got == [newer] and isinstance(got[0].probabilities, tuple)
    assert got[0].raw_sum == 0.9 and got[0].parse_status.value == "ok"


def test_searches_listing_and_explicit_id(store):
    assert store.searches() == []
    a = store.create_search({"method": "baseline"}, search_id="run-a")
    b = store.create_search({"method": "selective"})
    assert a == "run-a" and [s["id"] for s in store.searches()] == [a, b]
    assert store.get_search("nope") is None
    assert store.events("nope") == []


def test_context_manager_closes_and_reopens(tmp_path):
    path = tmp_path / "db.sqlite"
    with Store(path) as s:
        s.put_problem(_problem())
    with Store(path) as s:
        assert s.counts()["problems"] == 1 and s.schema_version() == SCHEMA_VERSION


def test_every_write_bumps_version_once(store):
    c = _cand()
    v = store.version()
    store.put_candidate(c)
    store.put_measurement(_meas(c))
    store.put_forecast(_forecast(c))
    sid = store.create_search({})
    store.add_event(sid, "x", {})
    assert store.version() == v + 5
    assert store.get_candidate(c.id) == c and store.version() == v + 5  # reads do not bump


def _event_writer(path, sid, n):
    s = Store(path)
    for i in range(n):
        s.add_event(sid, "generated", {"pid": os.getpid(), "i": i})


def test_events_from_threads_and_processes_get_unique_contiguous_seqs(tmp_path):
    path = tmp_path / "db.sqlite"
    store = Store(path)
    sid = store.create_search({})
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_event_writer, args=(str(path), sid, 25)) for _ in range(2)]
    for p in procs:
        p.start()
    threads = [threading.Thread(target=lambda: [store.add_event(sid, "t", {}) for _ in range(25)])
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    seqs = [e["seq"] for e in store.events(sid)]
    assert seqs == list(range(1, 101))


def test_parquet_round_trip_forecasts_searches_nulls_and_empty(tmp_path, store):
    c = _cand()
    store.put_candidate(c)
    failed = Measurement(candidate_id=c.id, problem_id=c.problem_id, hardware_key="h100",
                         status=Status.COMPILE_ERROR, reason="nvcc: error", log="x" * 10)
    store.put_measurement(failed)  # speedup and times are None
    store.put_forecast(_forecast(c))
    sid = store.create_search({"nested": {"k": [1, 2]}})
    store.set_search_state(sid, "running", step=3)
    store.export_parquet(tmp_path / "pq")
    other = Store(tmp_path / "other.sqlite")
    other.import_parquet(tmp_path / "pq")
    assert other.measurements() == [failed]
    assert other.forecasts() == store.forecasts()
    assert other.searches() == store.searches()
    assert other.problems() == []  # the empty table round-trips as empty
    v = other.version()
    other.import_parquet(tmp_path / "pq")  # importing twice changes nothing but the counter
    assert other.counts() == store.counts() and other.version() > v


def test_import_parquet_errors_say_what_to_do(tmp_path, store):
    with pytest.raises(StoreError, match="not a directory"):
        store.import_parquet(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoreError, match="no table files"):
        store.import_parquet(tmp_path / "empty")


def test_db_cli_info_export_import(tmp_path, capsys):
    from workbench.cli import main

    src, dst = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with Store(src) as s:
        c = _cand()
        s.put_candidate(c)
        s.put_measurement(_meas(c))
    assert main(["--db", str(src), "db", "export", str(tmp_path / "out")]) == 0
    assert main(["--db", str(dst), "db", "import", str(tmp_path / "out")]) == 0
    assert main(["--db", str(dst), "db", "info"]) == 0
    out = capsys.readouterr().out
    assert f"schema version: {SCHEMA_VERSION}" in out and str(dst.resolve()) in out
    assert "measurements    1" in out and "candidates      1" in out
    with Store(dst) as s:
        assert s.get_candidate(c.id) == c


def test_search_columns_win_over_config_keys_and_ids_are_unique(store):
    sid = store.create_search({"state": "bogus", "id": "bogus"}, search_id="s1")
    assert store.get_search(sid)["state"] == "created" and store.get_search(sid)["id"] == "s1"
    with pytest.raises(StoreError, match="exists already"):
        store.create_search({}, search_id="s1")
    assert len(store.searches()) == 1
