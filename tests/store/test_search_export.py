"""A search's candidates and measurements as tables, exported as CSV and Parquet: what the search
generated and measured, with its decisions; CSV guarded against spreadsheet formulas, Parquet
exact."""
from __future__ import annotations

import io

import pandas as pd
import pytest

from workbench.errors import StoreError
from workbench.execution.executors import CacheExecutor
from workbench.records import Candidate, Measurement, Problem, Status
from workbench.search import ReplayGenerator, SearchRun, make_method
from workbench.store import Store
from workbench.store.search_export import export_name, export_search, search_tables, table_bytes

SOURCE = "=HYPERLINK(\"http://example.invalid\",\"x\")\nclass ModelNew: pass\n"


@pytest.fixture
def searched(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    problem = Problem(id="L1/99_p", level=1, name="99_p", source="class Model: pass\n")
    cands = [Candidate.from_source(problem.id, SOURCE + f"V = {i}\n", origin="-cmd|' /c calc'!A0") for i in range(6)]
    ms = [Measurement(c.id, problem.id, "h100", Status.OK, reference_ms=1.0, candidate_ms=1.0 / (1 + i),
                      speedup=1.0 + i) for i, c in enumerate(cands)]
    store.put_problems([problem])
    run = SearchRun(store, problem, CacheExecutor(ms, "h100"), ReplayGenerator(cands, max_seeds=2), None,
                    make_method("measure_all", k=2), budget=4, max_seeds=2)
    run.run()
    return store, run.search_id


def test_the_tables_hold_what_the_search_generated_and_measured(searched):
    store, sid = searched
    t = search_tables(store, sid)
    measured = [e["payload"]["measurement"]["candidate_id"] for e in store.events(sid) if e["kind"] == "measured"]
    assert list(t["measurements"]["candidate_id"]) == measured and len(measured) == 4
    assert set(t["candidates"]["decision"]) <= {"measured", "dropped"}
    assert (t["candidates"]["decision"] == "measured").sum() == 4 and set(t["candidates"]["search_id"]) == {sid}
    with pytest.raises(StoreError, match="no search"):
        search_tables(store, "nope")


def test_parquet_is_exact_and_csv_is_formula_guarded(searched, tmp_path):
    store, sid = searched
    paths = export_search(store, sid, tmp_path / "out", "parquet")
    back = pd.read_parquet(paths["candidates"])
    assert back["source"].iloc[0].startswith("=HYPERLINK")  # exact
    csv = pd.read_csv(io.BytesIO(table_bytes(search_tables(store, sid)["candidates"], "csv")))
    assert all(v.startswith("'=") for v in csv["source"]) and all(v.startswith("'-cmd") for v in csv["origin"])
    assert paths["measurements"].name == f"{sid}-measurements.parquet"
    with pytest.raises(StoreError, match="format"):
        table_bytes(back, "xlsx")


def test_an_export_name_stays_in_its_folder():
    assert export_name("../../etc/passwd", "candidates", "csv") == "______etc_passwd-candidates.csv"
    assert "/" not in export_name("a/b", "measurements", "parquet")
